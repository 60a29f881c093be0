#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas {
namespace {

std::vector<CopyFamily>& families() {
  static std::vector<CopyFamily> all;
  return all;
}

}  // namespace

bool add_copy_family(CopyFamily family) {
  families().push_back(family);
  cuda::CopyInitiators::instance().listen([family](const cuda::InitiatorPtr& initiator) {
    if (auto benchmark = family(initiator)) Registry::instance().add(std::move(benchmark));
  });
  return true;
}

std::vector<std::unique_ptr<Benchmark>> copy_benchmarks_for(const cuda::InitiatorPtr& initiator) {
  std::vector<std::unique_ptr<Benchmark>> out;
  for (CopyFamily family : families())
    if (auto benchmark = family(initiator)) out.push_back(std::move(benchmark));
  return out;
}

// Figures from the committed 2x H200 runs (results/nvidia-h200-x2/gpu-suite-x8); docs/tiers.md
// lists them per rule.
TierRule device_pool_tier_rule() {
  return {{{"device_allocator", to_string(Allocator::DevicePool)}},
          "device_pool gives the device figure within 0.5% from 1 MiB up (CE and SM, h2d/d2h/d2d)"};
}

BenchmarkInfo copy_family_info(const cuda::CopyInitiator& initiator, const std::string& suffix, const std::string& what,
                               std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes) {
  std::vector<TierRule> full_tier{device_pool_tier_rule()};
  for (TierRule& rule : initiator.full_tier()) full_tier.push_back(std::move(rule));
  return cuda::gpu_suite_info("gpu.copy_" + initiator.name() + suffix, Category::ExplicitCopy,
                              what + initiator.info().words, Metric::Bandwidth, std::move(sizes),
                              std::move(quick_sizes), std::move(full_tier));
}

}  // namespace commatlas
