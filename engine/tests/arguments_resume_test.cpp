// Point keys (what --skip-points matches), the engine flags of resumed/repeated/swept runs, and
// how the runner ends a run whose process can no longer measure (FatalError).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "core/arguments.h"
#include "core/error.h"
#include "core/group.h"
#include "core/records.h"
#include "core/runner.h"

namespace commatlas {
namespace {

BenchmarkInfo test_info() {
  return BenchmarkInfo{"test.copy", Category::ExplicitCopy, "test", "", Metric::Bandwidth,
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

namespace commatlas {
namespace {

// Fails at its first size: with a FatalError (a corrupted GPU context) or a plain MeasurementError.
template <typename Failure>
class FailsAtFirstSize final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"test.fails", Category::Reference, "test", "", Metric::Latency, RankRange{1, 0},
            {8, 16}, {8, 16}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Nothing, MoveDirection::None, Mechanism::Harness, no_memory(), no_memory());
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t) const override {
    throw Failure("context corrupted");
  }
};

std::string run_into_file(const Benchmark& benchmark, bool* threw) {
  const std::string path = testing::TempDir() + "/runner-fatal.jsonl";
  std::remove(path.c_str());
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  *threw = false;
  {
    RecordFile out(path);
    try {
      run_benchmarks({&benchmark}, ctx, &out, ProgressMode::None);
    } catch (const FatalError&) {
      *threw = true;
    }
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return text;
}

TEST(Runner, FatalErrorIsRecordedOnceThenEndsTheRun) {
  bool threw = false;
  const std::string text = run_into_file(FailsAtFirstSize<FatalError>(), &threw);
  EXPECT_TRUE(threw);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;  // 8 B recorded, 16 B never tried
  EXPECT_NE(text.find("\"type\":\"error\""), std::string::npos) << text;
  // A plain measurement failure is recorded per point and the run goes on.
  const std::string both = run_into_file(FailsAtFirstSize<MeasurementError>(), &threw);
  EXPECT_FALSE(threw);
  EXPECT_EQ(std::count(both.begin(), both.end(), '\n'), 2) << both;
}

}  // namespace
}  // namespace commatlas
