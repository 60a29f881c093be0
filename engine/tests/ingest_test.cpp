#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "core/ingest.h"
#include "core/json_read.h"

namespace commatlas {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const char* kCopy =
    R"({"type":"result","benchmark":"torch.copy","category":"explicit_copy","interface":"torch","suite":"torch",)"
    R"("metric":"bandwidth","params":{"path":"h2d","non_blocking":true},)"
    R"("movement":{"operation":"copy","direction":"uni","mechanism":"torch",)"
    R"("from":{"memory":"host","allocator":"pinned","first_touch":"cpu"},"to":{"memory":"gpu","gpu":0,"allocator":"device"},)"
    R"("choices":{"non_blocking":true},"same_node":true},"bytes":1000,"ranks":1,"time":1700000000.5,)"
    R"("samples_s":[1e-6,2e-6,9e-6],"bytes_per_op":1000,)"
    R"("timing":{"method":"events","ops_per_sample":10,"warmup_samples":2,"max_over_ranks":false},)"
    R"("verified":{"ok":true,"bytes_checked":1000,"method":"bytes"}})";

std::vector<std::string> ingest(const std::string& text) {
  std::istringstream in(text);
  return ingest_records(in);
}

TEST(Ingest, AResultGoesThroughTheEnginesStatisticsAndWriter) {
  const auto records = ingest(std::string(kCopy) + "\n\n");
  ASSERT_EQ(records.size(), 1u);
  const std::string& r = records[0];
  // The median of the samples (2 us), not their mean: 1000 B / 2 us = 0.5 GB/s.
  EXPECT_TRUE(contains(r, "\"median_s\":2e-06")) << r;
  EXPECT_TRUE(contains(r, "\"bandwidth_gbps\":0.5,")) << r;
  EXPECT_TRUE(contains(r, "\"point\":\"torch.copy|path=\\\"h2d\\\",non_blocking=true|1000|1\"")) << r;
  EXPECT_TRUE(contains(r, "\"mechanism\":\"torch\"")) << r;
  EXPECT_TRUE(contains(r, "\"time\":1700000000.500")) << r;
  // Measured outside the harness: no precision, warm-up or cost fields it could not fill.
  EXPECT_FALSE(contains(r, "stop_reason")) << r;
  EXPECT_FALSE(contains(r, "\"cost\"")) << r;
}

TEST(Ingest, AFailedCheckIsAnErrorNeverAFigure) {
  std::string line = kCopy;
  line.replace(line.find("\"ok\":true"), 9, "\"ok\":false");
  line.replace(line.find("\"method\":\"bytes\"}"), 17, "\"method\":\"bytes\",\"detail\":\"element 3 is 255\"}");
  const auto records = ingest(line);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(contains(records[0], "\"type\":\"error\"")) << records[0];
  EXPECT_TRUE(contains(records[0], "data check failed: element 3 is 255")) << records[0];
  EXPECT_FALSE(contains(records[0], "bandwidth_gbps")) << records[0];
}

TEST(Ingest, CollectivesGetTheBusFactor) {
  std::string line = kCopy;
  line.replace(line.find("\"operation\":\"copy\""), 18, "\"operation\":\"allreduce\"");
  line.replace(line.find("\"same_node\""), 11, "\"participants\":4,\"same_node\"");
  const auto records = ingest(line);
  EXPECT_TRUE(contains(records[0], "\"bus_factor\":1.5")) << records[0];
}

// The OSU-method program reads where the host had put its ranks' CPUs after each pass, and no
// host counters: the records carry the window and the pair, nothing they were not given.
TEST(Ingest, APassOfAnotherProgramCarriesItsCpuPairOnly) {
  std::string line = kCopy;
  line.replace(line.find("\"max_over_ranks\":false}"), 23,
               R"("max_over_ranks":false,"host_activity":{"window_s":0.002,"cpu_pair":{"cpus":[0,1],"round_trip_ns":381.5}}})");
  line.replace(line.find("\"verified\""), 10,
               R"("confirmation":{"median_s":2e-6,"samples":1,"host_activity":{"window_s":0.003,"cpu_pair":null}},"verified")");
  const auto records = ingest(line);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(contains(records[0], R"("host_activity":{"window_s":0.002,"cpu_pair":{"cpus":[0,1],"round_trip_ns":381.5}})"))
      << records[0];
  EXPECT_TRUE(contains(records[1], R"("host_activity":{"window_s":0.003,"cpu_pair":null})")) << records[1];
  EXPECT_FALSE(contains(records[0], "cpu_ticks")) << records[0];
  // Without one, none: a program that did not read the pair says nothing of it.
  EXPECT_FALSE(contains(ingest(kCopy)[0], "host_activity"));
  std::string three = line;
  three.replace(three.find("[0,1]"), 5, "[0,1,2]");
  EXPECT_THROW(ingest(three), UsageError);
}

// The OSU-method program on device buffers reads each rank's copy level around its loop; the
// record keeps them as the harness writes its own, a failed reading as null.
TEST(Ingest, CopyLevelsOfAnotherProgramAreKeptPerRank) {
  std::string line = kCopy;
  line.replace(line.find("\"max_over_ranks\":false}"), 23,
               R"("max_over_ranks":false,"copy_level_us":[[7.5,7.6],[8.5,null]]})");
  const auto records = ingest(line);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(contains(records[0], R"("copy_level_us":[[7.5,7.6],[8.5,null]])")) << records[0];
  EXPECT_FALSE(contains(ingest(kCopy)[0], "copy_level_us"));
  for (const char* bad : {R"([[7.5]])", R"([7.5,7.6])", R"([[7.5,-1]])", R"({"a":1})"}) {
    std::string wrong = kCopy;
    wrong.replace(wrong.find("\"max_over_ranks\":false}"), 23,
                  std::string(R"("max_over_ranks":false,"copy_level_us":)") + bad + "}");
    EXPECT_THROW(ingest(wrong), UsageError) << bad;
  }
}

TEST(Ingest, BadInputNamesTheLineAndWritesNothing) {
  std::string unknown = kCopy;
  unknown.replace(unknown.find("\"mechanism\":\"torch\""), 19, "\"mechanism\":\"pigeon\"");
  for (const std::string& text : {std::string(kCopy) + "\n{\"type\":", std::string(kCopy) + "\n" + unknown,
                                  std::string("{\"type\":\"result\"}"), std::string("[1,2]")}) {
    try {
      ingest(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_TRUE(contains(e.what(), "ingest: line ")) << e.what();
    }
  }
  try {
    ingest(std::string(kCopy) + "\n" + unknown);
  } catch (const UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "line 2")) << e.what();
    EXPECT_TRUE(contains(e.what(), "'pigeon' is not one of")) << e.what();
  }
}

TEST(JsonRead, ReadsWhatTheWriterWrites) {
  const JsonValue v = parse_json(R"( {"a":[1,-2.5e3,true,null,"x\"\u00e9\ud83d\ude00"],"b":{"c":12345678901234}} )");
  ASSERT_TRUE(v.is(JsonValue::Kind::Object));
  const JsonValue* a = v.get("a");
  ASSERT_TRUE(a && a->items.size() == 5);
  EXPECT_TRUE(a->items[0].integral);
  EXPECT_DOUBLE_EQ(a->items[1].number, -2500);
  EXPECT_FALSE(a->items[1].integral);
  EXPECT_EQ(a->items[4].text, "x\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v.get("b")->get("c")->integer, 12345678901234LL);
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01x", "\"\\q\"", "[1] 2", "tru"})
    EXPECT_THROW(parse_json(bad), JsonParseError) << bad;
  std::string deep(200, '[');
  EXPECT_THROW(parse_json(deep), JsonParseError);
}

}  // namespace
}  // namespace commatlas
