// The NCCL collectives as benchmarks: what each one calls is the collective layer's table
// (collective/collective_nccl.h), as are buffers, timing, the exact check and bus factors. Each is
// registered twice: one MPI rank per GPU (nccl.<op>, suite mpi-gpu) and one process driving every GPU
// (nccl.single.<op>, suite nccl, for machines without MPI).
#include "collective/collective_nccl.h"
#include "backends/nccl/nccl_job.h"
#include "core/registry.h"

namespace commatlas {
namespace {

class NcclCollective final : public Benchmark {
 public:
  NcclCollective(const nccl::NcclCollectiveDef& def, nccl::NcclLaunch launch) : def_(def), launch_(launch) {}

  BenchmarkInfo info() const override {
    const std::string prefix = launch_ == nccl::NcclLaunch::RankPerProcess ? "nccl." : "nccl.single.";
    return nccl::nccl_info(
        prefix + to_string(def_.op), Category::Collective, launch_,
        "NCCL " + to_string(def_.op) + " of floats, " + nccl::launch_words(launch_) + ", checked exactly",
        Metric::Bandwidth, 2);
  }
  std::optional<std::string> unavailable(const Context& ctx) const override {
    return nccl::nccl_unavailable(launch_, ctx, 2);
  }
  std::vector<Params> variants(const Context& ctx) const override {
    return {Params{{"launch", to_string(launch_)}, {"gpus", nccl::job_devices(launch_, const_cast<Context&>(ctx))}}};
  }
  Movement movement(const Context& ctx, const Params& p) const override {
    Movement m = collective_movement(def_.op, Mechanism::Nccl, gpu_memory(std::nullopt, Allocator::Device),
                                     nccl::job_size(launch_, ctx, p));
    keep_choices(m, p, {"launch"});
    return m;
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return nccl::prepare_nccl_collective(nccl::nccl_team(launch_, ctx), ctx, def_, bytes);
  }

 private:
  const nccl::NcclCollectiveDef& def_;
  nccl::NcclLaunch launch_;
};

const bool registered = [] {
  for (const nccl::NcclCollectiveDef& def : nccl::nccl_collectives())
    for (nccl::NcclLaunch launch : {nccl::NcclLaunch::RankPerProcess, nccl::NcclLaunch::SingleProcess})
      Registry::instance().add(std::make_unique<NcclCollective>(def, launch));
  return true;
}();

}  // namespace

}  // namespace commatlas
