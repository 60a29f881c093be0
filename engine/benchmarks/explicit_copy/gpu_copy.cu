// gpu.copy_ce / gpu.copy_sm: one GPU copy (h2d, d2h, local d2d, peer) over allocators, first
// touch, direction and the side that drives it, by the copy engines or by the SM copy kernel.
#include "backends/cuda/copy_workload.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

// Shared by both engines: only the engine, its interface and (for SM) the kernel shape differ.
class GpuCopy final : public Benchmark {
 public:
  explicit GpuCopy(Engine engine) : engine_(engine) {}

  BenchmarkInfo info() const override {
    return copy_benchmark_info(engine_, "", "h2d/d2h over host allocators, local d2d, peer d2d; ",
                               gpu_bandwidth_sizes(), gpu_bandwidth_quick_sizes());
  }

  std::optional<std::string> unavailable(const Context&) const override { return no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (const CopySpec& spec : default_copy_specs(gpu_count())) {
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

COMMATLAS_REGISTER_BENCHMARK(GpuCopy, Engine::Ce);
COMMATLAS_REGISTER_BENCHMARK(GpuCopy, Engine::Sm);

}  // namespace
}  // namespace commatlas::gpu
