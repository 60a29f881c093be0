#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "core/registry.h"

namespace commatlas {
namespace {

std::vector<std::string> keys(const std::vector<const Benchmark*>& v) {
  std::vector<std::string> out;
  for (const Benchmark* b : v) out.push_back(b->info().key);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& k) { return std::find(v.begin(), v.end(), k) != v.end(); }

TEST(KeyMatches, Globs) {
  EXPECT_TRUE(key_matches("host.memcpy", "host.memcpy"));
  EXPECT_TRUE(key_matches("host.memcpy", "host.*"));
  EXPECT_TRUE(key_matches("host.memcpy", "*memcpy"));
  EXPECT_TRUE(key_matches("host.memcpy", "host.memcp?"));
  EXPECT_FALSE(key_matches("host.memcpy", "host"));
  EXPECT_FALSE(key_matches("host.memcpy", "gpu.*"));
}

TEST(Select, EverythingByDefaultSortedByKey) {
  const auto all = keys(select_benchmarks({}, {}, {}));
  EXPECT_EQ(all.size(), Registry::instance().all().size());
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(keys(select_benchmarks({"all"}, {}, {})), all);
}

TEST(Select, BySuite) {
  const auto host = select_benchmarks({"host"}, {}, {});
  ASSERT_FALSE(host.empty());
  for (const Benchmark* b : host) EXPECT_EQ(b->info().suite, "host");
  const auto k = keys(host);
  EXPECT_TRUE(has(k, "host.memcpy"));
  EXPECT_TRUE(has(k, "reference.harness_overhead"));
}

TEST(Select, OnlyAndExclude) {
  const auto only = keys(select_benchmarks({}, {"host.*"}, {}));
  ASSERT_FALSE(only.empty());
  for (const auto& k : only) EXPECT_EQ(k.rfind("host.", 0), 0u) << k;
  const auto two = keys(select_benchmarks({}, {"host.memcpy", "reference.harness_overhead"}, {}));
  EXPECT_EQ(two, (std::vector<std::string>{"host.memcpy", "reference.harness_overhead"}));
  const auto excluded = keys(select_benchmarks({}, {"host.*"}, {"host.pointer*"}));
  EXPECT_TRUE(has(excluded, "host.memcpy"));
  EXPECT_FALSE(has(excluded, "host.pointer_chase"));
  // Suite and --only intersect: a benchmark of another suite named by --only stays out. Which other
  // suites exist depends on the backends this build has, so take one that is registered.
  for (const Benchmark* b : Registry::instance().all()) {
    if (b->info().suite == "host") continue;
    EXPECT_TRUE(keys(select_benchmarks({"host"}, {b->info().key, "host.memcpy"}, {})) ==
                std::vector<std::string>{"host.memcpy"})
        << b->info().key;
    break;
  }
}

TEST(Select, UnknownSuiteOrPatternIsUsageError) {
  EXPECT_THROW(select_benchmarks({"no-such-suite"}, {}, {}), UsageError);
  EXPECT_THROW(select_benchmarks({}, {"no.such.*"}, {}), UsageError);
  // An --exclude that matches nothing is harmless.
  EXPECT_NO_THROW(select_benchmarks({}, {}, {"no.such.*"}));
}

TEST(Registry, FindAndDuplicateKey) {
  ASSERT_NE(Registry::instance().find("host.memcpy"), nullptr);
  EXPECT_EQ(Registry::instance().find("host.nothing"), nullptr);
}

}  // namespace
}  // namespace commatlas
