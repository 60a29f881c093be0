// Every tier decision, as a golden list: the variants only `--full` measures and the default
// variants whose larger sizes only `--full` measures, for every benchmark as listed on a 4-GPU
// node (fixtures/tiers.txt). Where the rules live may change (each benchmark's BenchmarkInfo today); what the
// default run measures must not change with it, unnoticed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include "core/registry.h"
#include "core/tiers.h"

#ifdef COMMATLAS_HAVE_CUDA
#include "backends/cuda/memory.h"
#endif

namespace commatlas {
namespace {

std::string golden_path() {
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / "tiers.txt").string();
}

// "<benchmark> <params>: full" or "<benchmark> <params>: default up to <bytes>".
std::string tier_line(const BenchmarkInfo& info, const Params& p) {
  const std::string& key = info.key;
  if (full_tier_rule(info, p)) return key + " " + p.describe() + ": full";
  if (const TierRule* cap = size_cap_rule(info, p))
    return key + " " + p.describe() + ": default up to " + std::to_string(cap->above_bytes);
  return "";
}

TEST(Tiers, EveryTierDecisionIsTheGoldenOne) {
#ifdef COMMATLAS_HIP
  GTEST_SKIP() << "the golden list is of a CUDA build's variants on 4 faked GPUs; the HIP build lists "
                  "its own (its GPU variants are not faked, as in movement_contract_test)";
#endif
#ifdef COMMATLAS_HAVE_CUDA
  cuda::override_gpu_count_for_tests(4);
#endif
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  std::set<std::string> decided;       // this build's tier lines
  std::set<std::string> listed_keys;   // benchmarks that listed a variant here
  for (const Benchmark* b : Registry::instance().all()) {
    const BenchmarkInfo info = b->info();
    for (const Params& p : b->variants(ctx)) {
      listed_keys.insert(info.key);
      const std::string line = tier_line(info, p);
      if (!line.empty()) decided.insert(line);
    }
  }
#ifdef COMMATLAS_HAVE_CUDA
  cuda::override_gpu_count_for_tests(std::nullopt);
#endif

  std::ifstream in(golden_path());
  ASSERT_TRUE(in) << golden_path();
  std::set<std::string> golden;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') golden.insert(line);

  bool same = true;
  for (const std::string& line : decided)
    if (!golden.count(line)) {
      ADD_FAILURE() << "a variant's tier is not the golden one (new rule, or a rule matches more): " << line;
      same = false;
    }
  // A golden line of a benchmark that listed variants here must still be decided: otherwise a
  // variant moved back to the default run. Benchmarks this build lacks (no MPI, no NCCL) or whose
  // variants need devices it cannot fake are not listed, so their lines are not asked for.
  for (const std::string& line : golden) {
    const std::string key = line.substr(0, line.find(' '));
    if (listed_keys.count(key) && !decided.count(line)) {
      ADD_FAILURE() << "a golden tier decision is gone (the variant is no longer listed, or no rule matches it): "
                    << line;
      same = false;
    }
  }
  if (!same) {
    std::cerr << "this build's tier lines (" << golden_path() << " after review):\n";
    for (const std::string& line : decided) std::cerr << line << "\n";
  }
#ifdef COMMATLAS_HAVE_CUDA
  EXPECT_FALSE(decided.empty()) << "a CUDA build lists the GPU benchmarks' full-tier variants";
#endif
}

}  // namespace
}  // namespace commatlas
