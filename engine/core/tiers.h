// Which variants the default run measures and which only `--full` adds.
//
// One table of rules, each naming the benchmarks (a glob), the parameter values that put a
// variant in the full tier, and the measurement that justified it (docs/tiers.md has the numbers).
// A variant no rule matches is in the default tier. The rule is kept apart from the benchmarks so
// that the default sweep can be read, and its cost judged, in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/benchmark.h"
#include "core/params.h"

namespace commatlas {

struct TierRule {
  std::string benchmarks;  // fnmatch glob over benchmark keys
  // Every (key, value) must match the variant's params (value "*": the key is
  // present at all; "!v": any value but v).
  std::vector<std::pair<std::string, std::string>> when;
  std::string why;  // one line, shown by `list --json`
  // 0: the whole variant is in the full tier. Otherwise only its default sizes above this many
  // bytes are (the variant stays in the default run at the sizes up to it).
  std::uint64_t above_bytes = 0;
};

const std::vector<TierRule>& tier_rules();

Tier tier_of(const std::string& benchmark, const Params& params);
// The rule that put a whole variant in the full tier (nullptr for the default tier).
const TierRule* full_tier_rule(const std::string& benchmark, const Params& params);
// The rule that keeps a default-tier variant's default sizes above `above_bytes` for --full
// (nullptr: every default size is in the default run).
const TierRule* size_cap_rule(const std::string& benchmark, const Params& params);

}  // namespace commatlas
