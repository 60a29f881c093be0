// Hang protection: a guard the runner arms around every benchmark point.
//
// A collective whose peer died, a transfer that never completes, a spin on a flag nobody sets:
// without a watchdog the job waits until the batch system kills it and nothing says where.
// When the guard outlives its time, it prints one line naming the point, this rank and its node,
// lets the other ranks' guards print theirs, and tears the whole job down through Group::abort
// (every rank, so none waits forever in its next call). A rank that stopped answering prints
// nothing: the ranks missing from those lines are the ones that stopped (the CLI names them).
// Records already written stay: the results file is flushed after every record.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/group.h"

namespace commatlas {

// Exit code of a job stopped by the watchdog.
inline constexpr int kWatchdogExitCode = 3;
// How long a guard that fired waits before aborting: every live rank armed its guard for the same
// point within this, so each prints its line before the abort reaches it.
inline constexpr double kWatchdogGraceSeconds = 2.0;
// A guard that fires later than this past its limit was itself not running: its process was
// stopped until the launcher's SIGCONT, which comes after the first guard's grace. A live rank's
// guard wakes within milliseconds; a stopped one's about a grace late, less the difference between
// the ranks' start of the point. With the old rule (late > grace, grace 1 s) a rank stopped by
// SIGSTOP was read as "every rank waited" about one time in five on 2 cores.
inline constexpr double kWatchdogStoppedSeconds = 0.5;

class Watchdog {
 public:
  // seconds <= 0: disarmed (no thread at all). `on_fire` runs with the line before the abort
  // (rank 0 writes the point's error record there).
  Watchdog(double seconds, std::string what, Group& group, std::function<void(const std::string&)> on_fire = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(double seconds);
  std::string what_;
  Group& group_;
  std::function<void(const std::string&)> on_fire_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// The one line the watchdog prints (exposed for tests).
// `late_s`: how long after its limit the guard ran; beyond the grace, the rank itself was stopped.
std::string watchdog_message(const std::string& what, double seconds, int rank, int ranks, const std::string& node = "",
                             double late_s = 0);

}  // namespace commatlas
