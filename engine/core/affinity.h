// Where an MPI rank's threads run. The launcher binds each rank to a block of cores
// (python/commatlas/run/launcher.py, cores_per_rank), so that the threads a GPU rank carries
// besides its own (NCCL's proxy service and progress threads, NVSHMEM's proxy) do not take turns
// with it on one core: bound to one core each on 2x H100, NCCL's first allgather and alltoall took
// 1.30 s and 1.20 s to connect, 0.49 s and 0.17 s with cores to spare.
//
// The thread that measures stays on one CPU of that block all the same: left to float over 16
// cores, the main threads of two ranks landed on CPUs that host MPI crosses at different speeds,
// run to run (1-byte bandwidth 0.0019 then 0.0039 GB/s in two identical runs on 2x H100). So it is
// pinned to the block's first CPU, and the library calls that start helper threads run inside a
// HelperThreadScope, where the calling thread may use the whole block, so the threads they start
// inherit the block and not the one CPU.
#pragma once

#include <string>
#include <vector>

namespace commatlas {

// Whether each rank may run only on CPUs that no other rank of its node may (cpu_list strings and
// hosts in rank order): then pinning each measuring thread to the first CPU of its own set puts no
// two on one CPU. Ranks left unbound (each may use the whole node) or sharing CPUs: false, and
// nothing is pinned. A list that cannot be read: false.
bool each_rank_has_its_own_cpus(const std::vector<std::string>& rank_cpus, const std::vector<std::string>& rank_nodes);

// Pins the calling thread to the first CPU it may run on, and remembers the whole set for
// HelperThreadScope. Nothing happens where the set has one CPU or cannot be read.
void pin_measuring_thread();

class HelperThreadScope {
 public:
  HelperThreadScope();   // the calling thread may run on the set pin_measuring_thread remembered
  ~HelperThreadScope();  // and is pinned again
  HelperThreadScope(const HelperThreadScope&) = delete;
  HelperThreadScope& operator=(const HelperThreadScope&) = delete;

 private:
  bool widened_ = false;
};

}  // namespace commatlas
