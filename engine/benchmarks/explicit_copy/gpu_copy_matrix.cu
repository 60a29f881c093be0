// gpu.copy_ce_matrix / gpu.copy_sm_matrix: every ordered GPU pair, one at a time (uni), and
// every pair in both directions at once (bi), at one large size.
#include "backends/cuda/copy_workload.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

class GpuCopyMatrix final : public Benchmark {
 public:
  explicit GpuCopyMatrix(Engine engine) : engine_(engine) {}

  BenchmarkInfo info() const override {
    return copy_benchmark_info(engine_, "_matrix", "every ordered GPU pair, uni and bi; ", {256ull << 20}, {64ull << 20});
  }

  std::optional<std::string> unavailable(const Context&) const override { return fewer_than_two_gpus(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (Direction d : {Direction::Uni, Direction::Bi})
      for (auto [src, dst] : matrix_pairs(gpu_count(), d)) {
        CopySpec spec;
        spec.path = Path::Peer;
        spec.direction = d;
        spec.src_gpu = src;
        spec.dst_gpu = dst;
        spec.side = Side::Src;
        out.push_back(copy_params(spec, engine_));
      }
    return out;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return prepare_copy(params, engine_, bytes, ctx.options.seed);
  }

 private:
  Engine engine_;
};

COMMATLAS_REGISTER_BENCHMARK(GpuCopyMatrix, Engine::Ce);
COMMATLAS_REGISTER_BENCHMARK(GpuCopyMatrix, Engine::Sm);

}  // namespace
}  // namespace commatlas::gpu
