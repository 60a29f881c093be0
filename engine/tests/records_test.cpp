#include <gtest/gtest.h>

#include "core/collective.h"
#include "core/records.h"

namespace commatlas {
namespace {

BenchmarkInfo test_info() {
  return BenchmarkInfo{"test.copy", Category::ExplicitCopy, "test", "", Metric::Bandwidth,
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

PeakAnswer link_peak() {
  PeakAnswer p;
  p.applies = true;
  p.gbps = 4.0;
  p.source = "test link";
  return p;
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

TEST(ResultRecord, WitnessesAreWrittenOnlyWhereMeasured) {
  const BenchmarkInfo info = test_info();
  const Params params;
  Measurement m = measurement(8, {1e-5});
  const std::string plain = result_record(PointId{info, &params, 8, 1}, m);
  EXPECT_FALSE(contains(plain, "host_enqueue_s")) << plain;
  EXPECT_FALSE(contains(plain, "copy_level_us")) << plain;
  m.host_enqueue_s = 9.5e-6;
  m.copy_level_us = {7.25, 7.5, 0, 0, 8.5, 9};  // before and after, per rank; rank 1 had no GPU
  const std::string r = result_record(PointId{info, &params, 8, 1}, m);
  EXPECT_TRUE(contains(r, "\"host_enqueue_s\":9.5e-06")) << r;
  EXPECT_TRUE(contains(r, "\"copy_level_us\":[[7.25,7.5],[null,null],[8.5,9]]")) << r;
}

TEST(ResultRecord, PeakFractionAndCollective) {
  const BenchmarkInfo info = test_info();
  Measurement m = measurement(1e6, {1e-3});
  m.accounting.collective = CollectiveAccounting{"allreduce", 1.5};
  const std::string r = result_record(PointId{info, nullptr, 1000000ull, 4}, m, PointFacts{link_peak()});
  EXPECT_TRUE(contains(r, "\"bandwidth_gbps\":1,")) << r;
  EXPECT_TRUE(contains(r, "\"busbw_gbps\":1.5")) << r;
  EXPECT_TRUE(contains(r, "\"fraction\":0.375")) << r;  // a collective's busbw against the link
}

TEST(ResultRecord, PeakFractionOfAPlainTransfer) {
  Measurement m = measurement(1e6, {1e-3});
  const std::string r = result_record(PointId{test_info(), nullptr, 1000000ull, 1}, m, PointFacts{link_peak()});
  EXPECT_TRUE(contains(r, "\"fraction\":0.25")) << r;
}

// Cache-resident or unknown: the record says why and carries no number a fraction could come from.
TEST(ResultRecord, UnknownPeakSaysWhyAndHasNoFraction) {
  PeakAnswer peak;
  peak.applies = true;
  peak.unknown = "cache-resident: the 32 MiB working set fits GPU 0's 50 MiB L2";
  const std::string r = result_record(PointId{test_info(), nullptr, 1000000ull, 1}, measurement(1e6, {1e-3}), PointFacts{peak});
  EXPECT_TRUE(contains(r, "\"peak\":{\"gbps\":null,\"unknown\":\"cache-resident: ")) << r;
  EXPECT_FALSE(contains(r, "fraction")) << r;
}

TEST(Records, EveryTypeCarriesTheMovement) {
  Movement m =
      movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CopyEngine,
                       host_memory(std::nullopt, Allocator::Pinned), gpu_memory(0, Allocator::Device),
                       Params{{"engine_side", std::string("dst")}, {"path", std::string("h2d")}}, {"engine_side"});
  m.to->node = "node-a";
  const BenchmarkInfo info = test_info();
  const PointId id{info, nullptr, 8ull, 1, std::nullopt, nullptr, &m};
  for (const std::string& r : {skip_record(id, "no GPU"), error_record(id, "boom"),
                               result_record(id, measurement(8, {1e-6}))}) {
    EXPECT_TRUE(contains(r, "\"movement\":{\"operation\":\"copy\",\"direction\":\"uni\",\"mechanism\":\"copy_engine\"")) << r;
    EXPECT_TRUE(contains(r, "\"from\":{\"memory\":\"host\",\"gpu\":null,\"numa\":null,\"rank\":null,\"node\":null,"
                            "\"processor\":false,\"allocator\":\"pinned\",\"first_touch\":\"cpu\"}")) << r;
    EXPECT_TRUE(contains(r, "\"to\":{\"memory\":\"gpu\",\"gpu\":0,")) << r;
    EXPECT_TRUE(contains(r, "\"node\":\"node-a\"")) << r;
    EXPECT_TRUE(contains(r, "\"choices\":{\"engine_side\":\"dst\"}")) << r;
    // Neither a copy kernel's GPU apart from the places nor a communicator: both fields absent.
    EXPECT_FALSE(contains(r, "\"by\"")) << r;
    EXPECT_FALSE(contains(r, "\"participants\"")) << r;
  }
}

TEST(Records, TheMoverApartFromThePlacesAndTheParticipantsAreWrittenWhenDeclared) {
  Movement copy = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::GpuLoadStore,
                                   gpu_memory(1, Allocator::Device), gpu_memory(1, Allocator::Device));
  copy.by = gpu_processor(0);
  const BenchmarkInfo info = test_info();
  const std::string r = result_record(PointId{info, nullptr, 8ull, 1, std::nullopt, nullptr, &copy},
                                      measurement(8, {1e-6}));
  EXPECT_TRUE(contains(r, "\"by\":{\"memory\":\"gpu\",\"gpu\":0,\"numa\":null,\"rank\":null,\"node\":null,"
                          "\"processor\":true,\"allocator\":null,\"first_touch\":null}")) << r;

  const Movement all =
      collective_movement(CollectiveOp::AllReduce, Mechanism::Nccl, gpu_memory(std::nullopt, Allocator::Device), 4);
  const std::string c = result_record(PointId{info, nullptr, 8ull, 1, std::nullopt, nullptr, &all},
                                      measurement(8, {1e-6}));
  EXPECT_TRUE(contains(c, "\"participants\":4,")) << c;
  EXPECT_FALSE(contains(c, "\"by\"")) << c;
}

// A record's `interface` is its movement's mechanism's word (both CUDA IPC copies are "cuda_ipc"),
// and "harness" for a bare reference loop, whatever it moves.
TEST(Records, TheInterfaceComesFromTheMovement) {
  const BenchmarkInfo info = test_info();
  Movement ipc = movement_between(Operation::SendRecv, MoveDirection::Uni, Mechanism::CudaIpcSm,
                                  gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device));
  const std::string r = skip_record(PointId{info, nullptr, 8ull, 2, std::nullopt, nullptr, &ipc}, "no GPU");
  EXPECT_TRUE(contains(r, "\"interface\":\"cuda_ipc\",")) << r;
  Movement bare =
      movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                       host_memory(std::nullopt, Allocator::Pageable), host_memory(std::nullopt, Allocator::Pageable));
  bare.reference_of = "host.memcpy";
  const std::string b = skip_record(PointId{info, nullptr, 8ull, 1, std::nullopt, nullptr, &bare}, "none");
  EXPECT_TRUE(contains(b, "\"interface\":\"harness\",")) << b;
  EXPECT_EQ(interface_of(Mechanism::CpuMemcpy), "memcpy");
  EXPECT_EQ(interface_of(Mechanism::GpuLoadStore), "sm_kernel");
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

TEST(Placement, CpuListJoinsRunsLikeTheKernelsCpulist) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(cpu_list({8, 0, 2, 1, 3, 10, 11, 3}), "0-3,8,10-11");  // any order, repeats once
  EXPECT_FALSE(this_process_cpus().empty());
}

TEST(Placement, RecordsSayEachRanksCpusOnlyWhenEveryRankSaid) {
  Placement p{{"a", "a"}, {}, {}, {"0", "1"}};
  JsonWriter w;
  w.begin_object();
  write_placement(w, p);
  w.end_object();
  EXPECT_NE(w.str().find(R"("cpus":["0","1"])"), std::string::npos) << w.str();
  p.rank_cpus = {"0"};  // not one per rank: left out rather than misattributed
  JsonWriter partial;
  partial.begin_object();
  write_placement(partial, p);
  partial.end_object();
  EXPECT_EQ(partial.str().find("cpus"), std::string::npos) << partial.str();
}

}  // namespace
}  // namespace commatlas
