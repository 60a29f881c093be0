#include "backends/nccl/nccl_job.h"

#include "backends/cuda/memory.h"
#include "core/sizes.h"

namespace commatlas::nccl {

std::string job_devices(NcclLaunch launch, Context& ctx) {
  const int gpus = cuda::gpu_count();
  if (gpus == 0) return "";
  if (launch == NcclLaunch::SingleProcess) {
    std::string out;
    for (int d = 0; d < gpus; ++d) out += (out.empty() ? "" : ",") + std::to_string(d);
    return out;
  }
  std::string out;
  for (const std::string& d : ctx.group.gather_strings(std::to_string(ctx.group.local_rank() % gpus)))
    out += (out.empty() ? "" : ",") + d;
  return out;
}

int job_size(NcclLaunch launch, const Context& ctx, const Params& variant) {
  if (launch == NcclLaunch::RankPerProcess) return ctx.group.size();
  return variant.has("gpus") ? list_length(variant.text("gpus")) : cuda::gpu_count();
}

std::string launch_words(NcclLaunch launch) {
  return launch == NcclLaunch::RankPerProcess ? "one MPI rank per GPU" : "one process driving every GPU";
}

BenchmarkInfo nccl_info(std::string key, Category category, NcclLaunch launch, std::string description, Metric metric,
                        int min_ranks) {
  BenchmarkInfo i{std::move(key), category,
                  launch == NcclLaunch::RankPerProcess ? "mpi-gpu" : "nccl", std::move(description), metric,
                  // Single-process mode is one process however many GPUs it drives.
                  launch == NcclLaunch::RankPerProcess ? RankRange{min_ranks, 0} : RankRange{1, 1}, {}, {}};
  i.default_sizes = transfer_sizes(8, 4ull << 30);
  i.quick_sizes = {8, 1ull << 20, 256ull << 20};
  return i;
}

}  // namespace commatlas::nccl
