// What every NCCL benchmark says about its job the same way: the GPUs it used and the words for
// how it was launched (the peak a record is compared with comes from its movement:
// topology/movement_peak.cpp).
#pragma once

#include <optional>
#include <string>

#include "backends/nccl/nccl_comm.h"
#include "core/benchmark.h"

namespace commatlas::nccl {

// Device of every NCCL rank ("0,1"), for the record's params. Collective under MPI (every rank
// calls it); meaningful on rank 0, which writes the records.
std::string job_devices(NcclLaunch launch, Context& ctx);


// Members of the job's communicator, for a collective's movement: the GPUs of its "gpus" param
// (one process drives every GPU it lists), or the MPI job's ranks with one rank per GPU.
int job_size(NcclLaunch launch, const Context& ctx, const Params& variant);

// "one MPI rank per GPU" / "one process driving every GPU", for timing descriptions.
std::string launch_words(NcclLaunch launch);

BenchmarkInfo nccl_info(std::string key, Category category, NcclLaunch launch, std::string description, Metric metric,
                        int min_ranks);

}  // namespace commatlas::nccl
