// Where the host put the job's CPUs, as the job feels it: the round trip of one cache line between
// two of the CPUs it runs on. A VM's vCPUs float over the host's cores, and the host moves them.
// On the 2-core CI VM the pair read 54-139 ns for minutes, then 311-435 ns (another core complex,
// by its size), and back; a shared-memory MPI ping-pong read 0.10-0.11 or 0.35-0.40 us with it,
// and a 2-thread 16 B copy, which waits on the same cache-line hand-over, moved 4x alike. No
// counter of the host shows this (no steal, no preemption): this reading does, beside every pass
// (core/host_activity.h), so a figure that moved with it is known to have moved with the machine.
//
// The pair is the job's, not the point's:
//  - a single process: its first two allowed CPUs, where a pool of two worker threads runs
//    (backends/host/worker_pool.h); one helper thread on each, the caller waiting;
//  - an MPI job: rank 0 and the lowest other rank on rank 0's node, where they run at that moment,
//    through a shared-memory page (POSIX shm) both map once for the job.
// None where the job has one CPU, or its ranks have no neighbour on rank 0's node.
#pragma once

#include <cstdint>
#include <optional>

namespace commatlas {

class Group;

struct CpuRoundTrip {
  int cpu_a = -1;  // rank 0's CPU (or the first helper's)
  int cpu_b = -1;  // its partner's
  double round_trip_ns = 0;  // the best of kPairBatches batches' means
};

// Round trips per batch, batches timed, and warm-up batches before them (they also absorb the two
// sides' arrival skew): 5 x 64 trips take 25-130 us at 80-400 ns, beside passes of milliseconds
// or more. A reading costs a single process 0.3-0.4 ms with its two helper threads on the 2-core
// VM; it reads what a pair of long-running threads reads there (core_to_core in scripts/device:
// 388-422 ns against 344-415), its readings within ±6% of their median over 300 calls.
inline constexpr int kPairTrips = 64;
inline constexpr int kPairBatches = 3;
inline constexpr int kPairWarmupBatches = 2;

// Collective: every rank of `group` calls it, in the same order. The reading reaches rank 0 (the
// others get nullopt). A reading that fails (a partner silent for a second, a CPU a helper cannot
// pin to) ends the job's readings: every later call returns nullopt on every rank.
std::optional<CpuRoundTrip> cpu_pair_round_trip(Group& group);

// The first two CPUs the calling thread may run on (its affinity mask), in ascending order, or
// nullopt with fewer than two.
struct CpuPairChoice {
  int a = -1, b = -1;
};
std::optional<CpuPairChoice> first_two_cpus();

}  // namespace commatlas
