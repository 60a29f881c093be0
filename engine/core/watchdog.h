// Hang protection: a guard the runner arms around every benchmark point.
//
// A collective whose peer died, a transfer that never completes, a spin on a flag nobody sets:
// without a watchdog the job waits until the batch system kills it and nothing says where.
// When the guard outlives its time, it prints one line naming the point and the rank, and tears
// the whole job down through Group::abort (every rank, so none waits forever in its next call).
// Records already written stay: the results file is flushed after every record.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "core/group.h"

namespace commatlas {

// Exit code of a job stopped by the watchdog.
inline constexpr int kWatchdogExitCode = 3;

class Watchdog {
 public:
  // seconds <= 0: disarmed (no thread at all).
  Watchdog(double seconds, std::string what, Group& group);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(double seconds);
  std::string what_;
  Group& group_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// The one line the watchdog prints (exposed for tests).
std::string watchdog_message(const std::string& what, double seconds, int rank, int ranks);

}  // namespace commatlas
