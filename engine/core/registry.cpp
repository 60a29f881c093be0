#include "core/registry.h"

#include <algorithm>
#include <fnmatch.h>
#include <set>
#include <stdexcept>

#include "core/error.h"

namespace commatlas {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

bool Registry::add(std::unique_ptr<Benchmark> benchmark) {
  const std::string key = benchmark->info().key;
  if (find(key)) throw std::logic_error("benchmark key registered twice: " + key);
  benchmarks_.push_back(std::move(benchmark));
  return true;
}

std::vector<const Benchmark*> Registry::all() const {
  std::vector<const Benchmark*> out;
  for (const auto& b : benchmarks_) out.push_back(b.get());
  std::sort(out.begin(), out.end(),
            [](const Benchmark* a, const Benchmark* b) { return a->info().key < b->info().key; });
  return out;
}

const Benchmark* Registry::find(const std::string& key) const {
  for (const auto& b : benchmarks_)
    if (b->info().key == key) return b.get();
  return nullptr;
}

bool key_matches(const std::string& key, const std::string& pattern) {
  return fnmatch(pattern.c_str(), key.c_str(), 0) == 0;
}

std::vector<const Benchmark*> select_benchmarks(const std::vector<std::string>& suites,
                                                const std::vector<std::string>& only,
                                                const std::vector<std::string>& exclude) {
  const auto all = Registry::instance().all();
  std::set<std::string> known_suites;
  for (const Benchmark* b : all) known_suites.insert(b->info().suite);
  for (const std::string& s : suites) {
    if (s != "all" && !known_suites.count(s)) {
      std::string names;
      for (const auto& k : known_suites) names += (names.empty() ? "" : ", ") + k;
      throw UsageError("unknown suite '" + s + "' (this build has: all, " + names + ")");
    }
  }
  for (const std::string& pattern : only) {
    if (std::none_of(all.begin(), all.end(), [&](const Benchmark* b) { return key_matches(b->info().key, pattern); }))
      throw UsageError("no benchmark matches '" + pattern + "' (see `commatlas list`)");
  }
  std::vector<const Benchmark*> out;
  for (const Benchmark* b : all) {
    const auto info = b->info();
    const bool in_suite = suites.empty() ||
                          std::any_of(suites.begin(), suites.end(), [&](const std::string& s) { return s == "all" || s == info.suite; });
    const bool in_only = only.empty() ||
                         std::any_of(only.begin(), only.end(), [&](const std::string& p) { return key_matches(info.key, p); });
    const bool excluded =
        std::any_of(exclude.begin(), exclude.end(), [&](const std::string& p) { return key_matches(info.key, p); });
    if (in_suite && in_only && !excluded) out.push_back(b);
  }
  return out;
}

}  // namespace commatlas
