#include "core/watchdog.h"

#include <chrono>
#include <cstdio>

namespace commatlas {
namespace {

// A guard that fires well after its time was itself not running (the process was stopped, e.g.
// SIGSTOP, until the launcher's SIGCONT before its kill): that rank is one that stopped answering.
std::string stopped_note(double late_s) {
  if (late_s <= kWatchdogStoppedSeconds) return "";
  char text[64];
  std::snprintf(text, sizeof text, ", itself stopped for %.0f s", late_s);
  return text;
}

}  // namespace

std::string watchdog_message(const std::string& what, double seconds, int rank, int ranks, const std::string& node,
                             double late_s) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", seconds);
  return "commatlas-engine: watchdog: " + what + " on " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
         " did not finish within " + limit + " s (seen by rank " + std::to_string(rank) +
         (node.empty() ? "" : " on " + node) + stopped_note(late_s) +
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
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(seconds);
  if (done_cv_.wait_for(lock, limit, [this] { return done_; })) return;
  const double late = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - seconds;
  const std::string line =
      watchdog_message(what_, seconds, group_.rank(), group_.size(), group_.size() > 1 ? group_.hostname() : "", late);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  if (on_fire_) on_fire_(line);
  lock.unlock();
  if (group_.size() > 1) std::this_thread::sleep_for(std::chrono::duration<double>(kWatchdogGraceSeconds));
  // From this thread on purpose: the measuring thread is the one that is stuck.
  group_.abort(kWatchdogExitCode);
}

}  // namespace commatlas
