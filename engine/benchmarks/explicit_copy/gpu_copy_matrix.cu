// gpu.copy_ce_matrix / gpu.copy_sm_matrix: every ordered GPU pair, one at a time (uni), and
// every pair in both directions at once (bi), at one large size.
#include "benchmarks/explicit_copy/copy_family.h"
#include "core/registry.h"

namespace commatlas::gpu {
namespace {

std::vector<CopySpec> every_pair(int gpus) {
  std::vector<CopySpec> out;
  for (Direction d : {Direction::Uni, Direction::Bi})
    for (auto [src, dst] : matrix_pairs(gpus, d)) {
      CopySpec spec;
      spec.path = Path::Peer;
      spec.direction = d;
      spec.src_gpu = src;
      spec.dst_gpu = dst;
      spec.side = Side::Src;
      out.push_back(spec);
    }
  return out;
}

CopyFamily pair_matrix() {
  return {"_matrix", "every ordered GPU pair, uni and bi; ", {256ull << 20}, {64ull << 20}, true, every_pair};
}

COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Ce, pair_matrix());
COMMATLAS_REGISTER_BENCHMARK(CopyFamilyBenchmark, Engine::Sm, pair_matrix());

}  // namespace
}  // namespace commatlas::gpu
