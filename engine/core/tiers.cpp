#include "core/tiers.h"

#include <variant>

#include "core/benchmark.h"

namespace commatlas {
namespace {

std::string text_of(const ParamValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::to_string(std::get<double>(v));
}

bool matches(const TierRule& rule, const Params& params) {
  for (const auto& [key, want] : rule.when) {
    bool found = false;
    for (const auto& [k, v] : params.entries())
      if (k == key) found = want == "*" || (want[0] == '!' ? text_of(v) != want.substr(1) : text_of(v) == want);
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::string to_string(Tier t) { return t == Tier::Default ? "default" : "full"; }

const TierRule* full_tier_rule(const BenchmarkInfo& benchmark, const Params& params) {
  for (const TierRule& rule : benchmark.full_tier)
    if (rule.above_bytes == 0 && matches(rule, params)) return &rule;
  return nullptr;
}

const TierRule* size_cap_rule(const BenchmarkInfo& benchmark, const Params& params) {
  for (const TierRule& rule : benchmark.full_tier)
    if (rule.above_bytes > 0 && matches(rule, params)) return &rule;
  return nullptr;
}

Tier tier_of(const BenchmarkInfo& benchmark, const Params& params) {
  return full_tier_rule(benchmark, params) ? Tier::Full : Tier::Default;
}

}  // namespace commatlas
