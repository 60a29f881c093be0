#include <gtest/gtest.h>

#include "core/records.h"

namespace commatlas {
namespace {

BenchmarkInfo test_info() {
  return BenchmarkInfo{"test.copy", Category::ExplicitCopy, Interface::Memcpy, "test", "", Metric::Bandwidth,
                       RankRange{1, 1}, {}, {}};
}

Measurement measurement(double bytes_per_op, std::vector<double> samples) {
  Measurement m;
  m.accounting.bytes_per_op = bytes_per_op;
  m.accounting.timing = "fake";
  m.stats = summarize(samples);
  m.samples = samples;
  m.sample_count = static_cast<std::int64_t>(samples.size());
  m.verification = {true, static_cast<std::uint64_t>(bytes_per_op), ""};
  return m;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ResultRecord, BandwidthIsBytesOverMedian) {
  const BenchmarkInfo info = test_info();
  const Params params{{"threads", std::int64_t{2}}};
  // Median 2 s (not the mean 4 s, not the min 1 s): 3e9 B / 2 s = 1.5 GB/s.
  const std::string r = result_record(PointId{info, &params, 3000000000ull, 1}, measurement(3e9, {1, 2, 9}));
  EXPECT_TRUE(contains(r, "\"bandwidth_gbps\":1.5,")) << r;
  EXPECT_TRUE(contains(r, "\"median_s\":2,")) << r;
  EXPECT_TRUE(contains(r, "\"latency_us\":2000000")) << r;
  EXPECT_TRUE(contains(r, "\"type\":\"result\"")) << r;
  EXPECT_TRUE(contains(r, "\"params\":{\"threads\":2}")) << r;
  EXPECT_TRUE(contains(r, "\"bytes\":3000000000,")) << r;
  EXPECT_TRUE(contains(r, "\"verified\":{\"ok\":true")) << r;
  EXPECT_FALSE(contains(r, "\"peak\"")) << r;  // absent when unknown, never a guess
}

TEST(ResultRecord, PeakFractionAndCollective) {
  const BenchmarkInfo info = test_info();
  Measurement m = measurement(1e6, {1e-3});
  m.accounting.peak = Peak{4.0, "test link"};
  m.accounting.collective = CollectiveAccounting{"allreduce", 1.5};
  const std::string r = result_record(PointId{info, nullptr, 1000000ull, 4}, m);
  EXPECT_TRUE(contains(r, "\"bandwidth_gbps\":1,")) << r;
  EXPECT_TRUE(contains(r, "\"busbw_gbps\":1.5")) << r;
  EXPECT_TRUE(contains(r, "\"fraction\":0.375")) << r;  // a collective's busbw against the link
}

TEST(ResultRecord, PeakFractionOfAPlainTransfer) {
  Measurement m = measurement(1e6, {1e-3});
  m.accounting.peak = Peak{4.0, "test link"};
  const std::string r = result_record(PointId{test_info(), nullptr, 1000000ull, 1}, m);
  EXPECT_TRUE(contains(r, "\"fraction\":0.25")) << r;
}

TEST(SkipAndErrorRecords, CarryReasonAndNoNumbers) {
  const BenchmarkInfo info = test_info();
  const std::string s = skip_record(PointId{info, nullptr, std::nullopt, 1}, "no \"GPU\"");
  EXPECT_TRUE(contains(s, "\"type\":\"skip\"")) << s;
  EXPECT_TRUE(contains(s, "\"reason\":\"no \\\"GPU\\\"\"")) << s;
  EXPECT_TRUE(contains(s, "\"bytes\":null")) << s;
  const std::string e = error_record(PointId{info, nullptr, 8ull, 1}, "boom");
  EXPECT_TRUE(contains(e, "\"type\":\"error\"")) << e;
  EXPECT_FALSE(contains(e, "bandwidth_gbps")) << e;
  EXPECT_FALSE(contains(e, "stats")) << e;
}

}  // namespace
}  // namespace commatlas
