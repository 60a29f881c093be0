// What the host did while a batch was timed, beside the work being measured: the machine's own
// witness for a figure that does not repeat. A point whose two passes disagree (core/harness.h,
// Stability) may have met a hypervisor that ran another guest on its vCPUs (steal), other
// processes busy on the same CPUs, its own threads preempted, or pages faulted in mid-batch.
// Steal and other processes are the machine's, not the tool's; preemptions and faults can come
// from this job's own threads and pages too. The records give the numbers, per pass, and where
// none of them moved they show that too (the cause is then not one the host counts).
//
// Read from /proc/stat (every CPU of the node, clock ticks) and getrusage (this process, every
// thread). Two reads of each around a window, a few tens of microseconds, outside the timed
// samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cpu_pair.h"

namespace commatlas {

class Group;
class JsonWriter;

// The node's CPU time over a window, by what /proc/stat says it went to (clock ticks, summed
// over every CPU).
struct CpuTicks {
  std::int64_t busy = 0;   // user, nice, system, irq, softirq (guest time is inside user)
  std::int64_t idle = 0;   // idle and iowait
  std::int64_t steal = 0;  // a hypervisor ran something else while this guest's vCPU wanted to run
  std::int64_t total() const { return busy + idle + steal; }
};
// The "cpu" line of /proc/stat's text; nullopt when it is missing or cannot be read.
std::optional<CpuTicks> parse_cpu_ticks(const std::string& proc_stat);
// Each CPU's steal ticks ("cpuN" lines, in order); empty when there are none.
std::vector<std::int64_t> parse_cpu_steal(const std::string& proc_stat);

struct HostActivity {
  double window_s = 0;
  // The node's CPU time in the window (every CPU, clock ticks: sysconf(_SC_CLK_TCK) a second
  // each), and what share of it the hypervisor took (steal) and other processes used (busy time
  // less this job's own CPU time on the node). Absent when /proc/stat cannot be read; others
  // also where the job's ranks span nodes (their CPU time is not this node's).
  std::int64_t cpu_ticks = 0;
  std::optional<double> steal_share;
  std::optional<double> others_share;
  // Steal per CPU. A parallel operation waits for its slowest thread, so one vCPU the hypervisor
  // holds stalls it while the node's share stays small (2x H100: a 32-thread copy at 3 ms instead
  // of 50 us, in a pass with 3% of the node's time stolen). /proc/stat prints a CPU's steal
  // truncated to whole ticks, so a difference of n ticks is at least n - 1 ticks of steal: CPUs
  // that surely lost some (2 ticks or more), and the least the most-stolen of them lost.
  int steal_cpus = 0;
  double most_stolen_cpu_s = 0;
  // This job's processes (every rank): threads preempted by the scheduler, and page faults.
  std::int64_t involuntary_switches = 0;
  std::int64_t page_faults = 0;
  // Where the host had put the job's CPUs just after the window: a cache line's round trip
  // between two of them (core/cpu_pair.h). Absent where the job has no such pair.
  std::optional<CpuRoundTrip> cpu_pair;
  // False where only the window and the CPU pair were read, by a program outside the harness (the
  // OSU method's, whose records come in through core/ingest.h): the counters above were not.
  bool counted = true;
};

// What one process reads at each end of a window.
struct HostSample {
  std::optional<CpuTicks> ticks;  // the node's
  std::vector<std::int64_t> cpu_steal;  // each CPU's steal ticks
  double at_s = 0;                // steady clock
  std::int64_t own_cpu_us = 0;    // this process's CPU time, every thread (getrusage)
  std::int64_t switches = 0;      // its involuntary context switches
  std::int64_t faults = 0;        // its minor and major page faults
};
HostSample sample_host();

// Shares come from clock ticks, which the kernel hands out one per CPU per tick to whatever ran
// then: a sampled proportion whose error over n ticks is about 1/(2 sqrt(n)). Fewer ticks than
// this (a 10 ms window on 2 CPUs has 2) give no share at all, rather than a 50% made of one tick.
inline constexpr std::int64_t kMinTicksForShares = 30;

// The activity between two samples of rank 0's process; `job_*`: the same differences summed
// over every rank. `single_node`: every rank shares rank 0's node (else others_share is left out).
HostActivity activity_between(const HostSample& begin, const HostSample& end, std::int64_t job_cpu_us,
                              std::int64_t job_switches, std::int64_t job_faults, bool single_node);

// Opened on every rank before a window, closed on every rank after it (closing sums over ranks
// and reads the CPU pair: a collective). `single_node`: every rank of the job shares rank 0's node.
class HostActivityWindow {
 public:
  HostActivityWindow() : begin_(sample_host()) {}
  HostActivity close(Group& group, bool single_node) const;

 private:
  HostSample begin_;
};

void write_host_activity(JsonWriter& w, const HostActivity& a);

}  // namespace commatlas
