// Which variants the default run measures and which only `--full` adds.
//
// One table of rules, each naming the benchmarks (a glob), the parameter values that put a
// variant in the full tier, and the measurement that justified it (docs/tiers.md has the numbers).
// A variant no rule matches is in the default tier. The rule is kept apart from the benchmarks so
// that the default sweep can be read, and its cost judged, in one place.
#pragma once

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
};

const std::vector<TierRule>& tier_rules();

Tier tier_of(const std::string& benchmark, const Params& params);
// The rule that put a variant in the full tier (nullptr for the default tier).
const TierRule* full_tier_rule(const std::string& benchmark, const Params& params);

}  // namespace commatlas
