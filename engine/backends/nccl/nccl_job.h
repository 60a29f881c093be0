// What every NCCL benchmark says about its job the same way: the GPUs it used, the link peak
// its bandwidth is compared with, and the words for how it was launched.
#pragma once

#include <optional>
#include <string>

#include "backends/nccl/nccl_comm.h"
#include "core/benchmark.h"

namespace commatlas {

// Device of every NCCL rank ("0,1"), for the record's params. Collective under MPI (every rank
// calls it); meaningful on rank 0, which writes the records.
std::string job_devices(NcclLaunch launch, Context& ctx);

// The per-direction link peak between the GPUs of NCCL ranks 0 and 1, times `directions`,
// from the topology; nullopt when the topology does not know it.
std::optional<Peak> rank_pair_peak(int directions);

// "one MPI rank per GPU" / "one process driving every GPU", for timing descriptions.
std::string launch_words(NcclLaunch launch);

BenchmarkInfo nccl_info(std::string key, Category category, NcclLaunch launch, std::string description, Metric metric,
                        int min_ranks);

}  // namespace commatlas
