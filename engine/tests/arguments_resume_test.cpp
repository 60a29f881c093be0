// Point keys (what --skip-points matches) and the engine flags of resumed/repeated/swept runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/arguments.h"
#include "core/error.h"
#include "core/records.h"

namespace commatlas {
namespace {

BenchmarkInfo test_info() {
  return BenchmarkInfo{"test.copy", Category::ExplicitCopy, Interface::Memcpy, "test", "", Metric::Bandwidth,
                       RankRange{1, 0}, {}, {}};
}

Args parse(std::vector<const char*> words) {
  words.insert(words.begin(), "commatlas-engine");
  return parse_args(static_cast<int>(words.size()), words.data());
}

TEST(PointKey, NamesBenchmarkParamsBytesRanksAndRepeat) {
  const BenchmarkInfo info = test_info();
  const Params params{{"threads", std::int64_t{2}}, {"mode", std::string("a,b")}};
  EXPECT_EQ(point_key(PointId{info, &params, 4096ull, 2}), "test.copy|threads=2,mode=\"a,b\"|4096|2");
  EXPECT_EQ(point_key(PointId{info, nullptr, std::nullopt, 1, 3}), "test.copy||-|1|r3");
  // Every size, rank count and repetition is its own point.
  EXPECT_NE(point_key(PointId{info, &params, 8ull, 2}), point_key(PointId{info, &params, 8ull, 4}));
  EXPECT_NE(point_key(PointId{info, &params, 8ull, 2, 1}), point_key(PointId{info, &params, 8ull, 2, 2}));
}

TEST(PointKey, IsWrittenIntoTheRecord) {
  const BenchmarkInfo info = test_info();
  const std::string r = skip_record(PointId{info, nullptr, 8ull, 1, 2}, "why");
  EXPECT_NE(r.find("\"point\":\"test.copy||8|1|r2\""), std::string::npos) << r;
  EXPECT_NE(r.find("\"repeat\":2"), std::string::npos) << r;
  EXPECT_EQ(skip_record(PointId{info, nullptr, 8ull, 1}, "why").find("\"repeat\""), std::string::npos);
}

TEST(Arguments, RecordEnvReadsTheVariableItself) {
  setenv("COMMATLAS_ARGS_TEST", "Ring", 1);
  unsetenv("COMMATLAS_ARGS_UNSET");
  const Args a = parse({"run", "--record-env", "COMMATLAS_ARGS_TEST,COMMATLAS_ARGS_UNSET", "--repeat-index", "3"});
  ASSERT_EQ(a.options.record_params.size(), 2u);
  EXPECT_EQ(a.options.record_params[0], (std::pair<std::string, std::string>{"env.COMMATLAS_ARGS_TEST", "Ring"}));
  EXPECT_EQ(a.options.record_params[1].second, "(unset)");
  EXPECT_EQ(a.options.repeat, 3);
  EXPECT_THROW(parse({"run", "--record-env", "1BAD"}), UsageError);
  EXPECT_THROW(parse({"run", "--record-env", "A=B"}), UsageError);
  EXPECT_THROW(parse({"run", "--repeat-index", "-1"}), UsageError);
}

TEST(Arguments, SkipPointsReadsOneKeyPerLine) {
  const std::string path = testing::TempDir() + "/skip-points.txt";
  std::ofstream(path) << "a|b|8|1\n\nc||-|2\n";
  const Args a = parse({"run", "--skip-points", path.c_str()});
  EXPECT_EQ(a.options.skip_points, (std::set<std::string>{"a|b|8|1", "c||-|2"}));
  EXPECT_THROW(parse({"run", "--skip-points", "/no/such/file"}), UsageError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace commatlas
