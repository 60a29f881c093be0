// Which variants the default run measures and which only `--full` adds.
//
// Each benchmark declares its own rules (BenchmarkInfo::full_tier): the parameter values that put
// a variant in the full tier, and the measurement that justified it (docs/tiers.md has the
// numbers). A variant none of its benchmark's rules matches is in the default tier. `list --json`
// shows each full-tier variant with its rule's reason, and engine/tests/fixtures/tiers.txt lists
// every decision, so the default sweep and its cost can still be read in one place.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/params.h"

namespace commatlas {

struct BenchmarkInfo;

struct TierRule {
  // Every (key, value) must match the variant's params (value "*": the key is present at all;
  // "!v": any value but v). Empty: every variant of the benchmark.
  std::vector<std::pair<std::string, std::string>> when;
  std::string why;  // one line, shown by `list --json`
  // 0: the whole variant is in the full tier. Otherwise only its default sizes above this many
  // bytes are (the variant stays in the default run at the sizes up to it).
  std::uint64_t above_bytes = 0;
};

// Which sweep a variant belongs to: the default run, or only `--full`.
enum class Tier { Default, Full };
std::string to_string(Tier t);

Tier tier_of(const BenchmarkInfo& benchmark, const Params& params);
// The first of the benchmark's rules that puts a whole variant in the full tier (nullptr for the
// default tier).
const TierRule* full_tier_rule(const BenchmarkInfo& benchmark, const Params& params);
// The rule that keeps a default-tier variant's default sizes above `above_bytes` for --full
// (nullptr: every default size is in the default run).
const TierRule* size_cap_rule(const BenchmarkInfo& benchmark, const Params& params);

}  // namespace commatlas
