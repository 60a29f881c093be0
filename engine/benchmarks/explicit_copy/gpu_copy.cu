// gpu.copy_ce / gpu.copy_sm: one GPU copy (h2d, d2h, local d2d, peer) over allocators, first
// touch, direction and the side that drives it, by the copy engines or by the SM copy kernel.
#include "benchmarks/explicit_copy/copy_family.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

// docs/tiers.md: registered host memory (CE), and why the SM kernel's stays in the default run.
std::vector<TierRule> single_copy_tiers(Engine engine) {
  if (engine != Engine::Ce) return {};
  return {{{{"host_alloc", "registered"}},
           "registered host memory gives the pinned figure within 0.9% at every size (CE h2d and d2h)"}};
}

CopyFamily single_copies() {
  return {"", "h2d/d2h over host allocators, local d2d, peer d2d; ", gpu_bandwidth_sizes(),
          gpu_bandwidth_quick_sizes(), false, default_copy_specs, single_copy_tiers};
}

COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Ce, single_copies());
COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Sm, single_copies());

}  // namespace
}  // namespace commatlas::gpu
