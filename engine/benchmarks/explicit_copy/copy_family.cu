#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas::gpu {
namespace {

std::vector<CopyFamily>& families() {
  static std::vector<CopyFamily> all;
  return all;
}

}  // namespace

bool add_copy_family(CopyFamily family) {
  families().push_back(family);
  CopyInitiators::instance().listen([family](const InitiatorPtr& initiator) {
    if (auto benchmark = family(initiator)) Registry::instance().add(std::move(benchmark));
  });
  return true;
}

std::vector<std::unique_ptr<Benchmark>> copy_benchmarks_for(const InitiatorPtr& initiator) {
  std::vector<std::unique_ptr<Benchmark>> out;
  for (CopyFamily family : families())
    if (auto benchmark = family(initiator)) out.push_back(std::move(benchmark));
  return out;
}

BenchmarkInfo copy_family_info(const CopyInitiator& initiator, const std::string& suffix, const std::string& what,
                               std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes) {
  return gpu_suite_info("gpu.copy_" + initiator.name() + suffix, Category::ExplicitCopy, initiator.info().interface,
                        what + initiator.info().words, Metric::Bandwidth, std::move(sizes), std::move(quick_sizes));
}

}  // namespace commatlas::gpu
