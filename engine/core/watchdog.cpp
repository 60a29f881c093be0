#include "core/watchdog.h"

#include <chrono>
#include <cstdio>

namespace commatlas {

std::string watchdog_message(const std::string& what, double seconds, int rank, int ranks, const std::string& node) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", seconds);
  return "commatlas-engine: watchdog: " + what + " on " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
         " did not finish within " + limit + " s (seen by rank " + std::to_string(rank) +
         (node.empty() ? "" : " on " + node) +
         "); aborting the job (raise the limit with --watchdog SECONDS, 0 disables)";
}

Watchdog::Watchdog(double seconds, std::string what, Group& group, std::function<void(const std::string&)> on_fire)
    : what_(std::move(what)), group_(group), on_fire_(std::move(on_fire)) {
  if (seconds > 0) thread_ = std::thread([this, seconds] { watch(seconds); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_one();
  thread_.join();
}

void Watchdog::watch(double seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto limit = std::chrono::duration<double>(seconds);
  if (done_cv_.wait_for(lock, limit, [this] { return done_; })) return;
  const std::string line =
      watchdog_message(what_, seconds, group_.rank(), group_.size(), group_.size() > 1 ? group_.hostname() : "");
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  if (on_fire_) on_fire_(line);
  lock.unlock();
  if (group_.size() > 1) std::this_thread::sleep_for(std::chrono::duration<double>(kWatchdogGraceSeconds));
  // From this thread on purpose: the measuring thread is the one that is stuck.
  group_.abort(kWatchdogExitCode);
}

}  // namespace commatlas
