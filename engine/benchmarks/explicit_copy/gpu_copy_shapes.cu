// gpu.copy_sm_shapes: the SM copy kernel's shape swept at one large size, on the local copy and
// on the peer copy driven from either side, so a run shows which shape reaches the link and HBM
// peaks (and gpu.copy_sm's default shape can be chosen from evidence).
#include "backends/cuda/copy_workload.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

class GpuCopySmShapes final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"gpu.copy_sm_shapes",
                         Category::ExplicitCopy,
                         "gpu",
                         "SM copy kernel shapes (vector 4/16 B, unroll 1/4, 1-8 blocks per SM): local and peer 0->1",
                         Metric::Bandwidth,
                         RankRange{1, 1},
                         {256ull << 20},
                         {64ull << 20}};
    i.full_tier = {device_pool_tier_rule(),
                   {{}, "48 kernel shapes at one size: a tuning study; gpu.copy_sm runs the shape that wins"}};
    return i;
  }

  std::optional<std::string> unavailable(const Context&) const override { return no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override { return shape_variants(gpu_count()); }

  Movement movement(const Context&, const Params& params) const override { return copy_movement(params, Engine::Sm); }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return prepare_copy(params, Engine::Sm, bytes, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(GpuCopySmShapes);

}  // namespace
}  // namespace commatlas::gpu
