// gpu.copy_ce / gpu.copy_sm: one GPU copy (h2d, d2h, local d2d, peer) over allocators, first
// touch, direction and the side that drives it, by the copy engines or by the SM copy kernel.
#include "benchmarks/explicit_copy/copy_family.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

CopyFamily single_copies() {
  return {"", "h2d/d2h over host allocators, local d2d, peer d2d; ", gpu_bandwidth_sizes(),
          gpu_bandwidth_quick_sizes(), false, default_copy_specs};
}

COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Ce, single_copies());
COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Sm, single_copies());

}  // namespace
}  // namespace commatlas::gpu
