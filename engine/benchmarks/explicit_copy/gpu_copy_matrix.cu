// gpu.copy_<initiator>_matrix: every ordered GPU pair, one at a time (uni), and every pair in both
// directions at once (bi), at one large size.
#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas {
namespace {

std::vector<cuda::CopySpec> every_pair(int gpus) {
  std::vector<cuda::CopySpec> out;
  for (cuda::Direction d : {cuda::Direction::Uni, cuda::Direction::Bi})
    for (auto [src, dst] : cuda::matrix_pairs(gpus, d)) {
      cuda::CopySpec spec;
      spec.path = cuda::Path::Peer;
      spec.direction = d;
      spec.src_gpu = src;
      spec.dst_gpu = dst;
      spec.side = cuda::Side::Src;
      out.push_back(spec);
    }
  return out;
}

std::unique_ptr<Benchmark> pair_matrix(const cuda::InitiatorPtr& initiator) {
  return std::make_unique<CopySpecsBenchmark>(
      initiator, CopySpecs{"_matrix", "every ordered GPU pair, uni and bi; ", {256ull << 20}, {64ull << 20}, true, every_pair});
}

COMMATLAS_REGISTER_COPY_FAMILY(pair_matrix);

}  // namespace
}  // namespace commatlas
