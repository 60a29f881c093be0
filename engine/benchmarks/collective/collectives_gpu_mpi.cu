// MPI collectives on GPU buffers: every definition of collective/collective_mpi.h (allreduce,
// allgather, reduce_scatter, alltoall, broadcast, ...) over device memory of each rank's GPU,
//   mpi.staged.<op>:    staged through pinned host memory (D2H, MPI call, H2D in the timed op)
//   mpi.gpu_aware.<op>: device pointers handed to MPI, only when the library is CUDA-aware.
#include "collective/collective_mpi.h"
#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/mpi_comm.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

// Holds the operation, not the definition: the definitions register themselves at static
// initialisation of their own files, in an order relative to this one that nobody controls, so
// each is looked up when first needed.
class GpuCollective final : public Benchmark {
 public:
  GpuCollective(CollectiveOp op, mpi::GpuMessagePath path) : op_(op), path_(path) {}

  BenchmarkInfo info() const override {
    const bool staged = path_ == mpi::GpuMessagePath::Staged;
    const mpi::CollectiveDefinition* d = mpi::find_mpi_collective(op_);
    BenchmarkInfo i{std::string(staged ? "mpi.staged." : "mpi.gpu_aware.") + to_string(op_), Category::Collective,
                    "mpi-gpu",
                    (d ? d->mpi_call : to_string(op_)) + " over all ranks on device buffers, " +
                        (staged ? "staged through pinned host memory" : "handed to MPI directly (GPU-aware)") +
                        ", slowest rank per iteration",
                    Metric::Bandwidth, RankRange{2, 0}, std::vector<std::uint64_t>{8, 64ull << 10, 1ull << 20, 16ull << 20}, {8, 1ull << 20}};
    i.full_tier = mpi::gpu_message_tier_rules(path_, false);
    return i;
  }

  std::optional<std::string> unavailable(const Context& ctx) const override {
    if (auto why = mpi::mpi_run_unavailable(ctx)) return why;
    if (cuda::gpu_count() == 0) return "no GPU visible (no device or driver)";
    if (!mpi::find_mpi_collective(op_)) return "no MPI definition of " + to_string(op_) + " is built in";
    return std::nullopt;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    std::string gpus;
    for (const std::string& g : ctx.group.gather_strings(std::to_string(mpi::rank_gpu(ctx.group))))
      gpus += (gpus.empty() ? "" : ",") + g;
    return {Params{{"allocator", to_string(cuda::MemoryKind::Device)}, {"gpus", gpus}}};
  }

  // Every rank's buffer on its own GPU (gpu unset: each rank has its own).
  Movement movement(const Context& ctx, const Params& p) const override {
    const Mechanism mechanism = path_ == mpi::GpuMessagePath::Staged ? Mechanism::MpiStaged : Mechanism::MpiGpuAware;
    const cuda::MemoryKind allocator =
        p.has("allocator") ? cuda::memory_kind_from_string(p.text("allocator")) : cuda::MemoryKind::Device;
    return collective_movement(op_, mechanism, mpi::message_place(allocator, std::nullopt), ctx.group.size());
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const cuda::MemoryKind allocator = cuda::memory_kind_from_string(params.text("allocator"));
    if (auto refusal = mpi::gpu_pointer_refusal(path_, mpi::allocator_memory(allocator), mpi::mpi_cuda_support()))
      throw Skip(*refusal);
    return mpi::prepare_collective_workload(ctx, *mpi::find_mpi_collective(op_),
                                            mpi::gpu_message_buffers(path_, allocator, mpi::rank_gpu(ctx.group)),
                                            bytes);
  }

 private:
  CollectiveOp op_;
  mpi::GpuMessagePath path_;
};

const bool registered = [] {
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                          CollectiveOp::AllToAll, CollectiveOp::Broadcast})
    for (mpi::GpuMessagePath path : {mpi::GpuMessagePath::Staged, mpi::GpuMessagePath::Direct})
      Registry::instance().add(std::make_unique<GpuCollective>(op, path));
  return true;
}();

}  // namespace
}  // namespace commatlas
