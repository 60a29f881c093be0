// gpu.copy_<initiator> (gpu.copy_ce, gpu.copy_sm): one GPU copy (h2d, d2h, local d2d, peer) over
// allocators, first touch, direction and the side that drives it.
#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas {
namespace {

std::unique_ptr<Benchmark> single_copies(const cuda::InitiatorPtr& initiator) {
  return std::make_unique<CopySpecsBenchmark>(
      initiator, CopySpecs{"", "h2d/d2h over host allocators, local d2d, peer d2d; ", cuda::gpu_bandwidth_sizes(),
                           cuda::gpu_bandwidth_quick_sizes(), false, cuda::default_copy_specs});
}

COMMATLAS_REGISTER_COPY_FAMILY(single_copies);

}  // namespace
}  // namespace commatlas
