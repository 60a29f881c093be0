// Pure logic behind every collective figure (NCCL and MPI-on-GPU): bus factors, how a size is
// split into per-rank blocks, and the algbw/busbw/goodput a record carries, against values
// worked out by hand. No GPU, no NCCL call.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "core/collective.h"
#include "core/records.h"

namespace commatlas {
namespace {

TEST(BusFactor, MatchesNcclTestsByHand) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllReduce, 2), 1.0);    // 2*1/2
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllReduce, 4), 1.5);    // 2*3/4
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllReduce, 8), 1.75);   // 2*7/8
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllGather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::Reduce, 8), 1.0);
}

TEST(CollectiveShape, AllReduceCountsWholeElements) {
  const auto s = collective_shape(CollectiveOp::AllReduce, 10, 4, 4);  // 2 floats, 2 bytes dropped
  ASSERT_TRUE(s);
  EXPECT_EQ(s->send_elements, 2u);
  EXPECT_EQ(s->recv_elements, 2u);
  EXPECT_EQ(s->counted_bytes, 8u);
}

TEST(CollectiveShape, AllGatherSizeIsTheGatheredOutput) {
  const auto s = collective_shape(CollectiveOp::AllGather, 8, 2, 4);  // 1 float from each of 2 ranks
  ASSERT_TRUE(s);
  EXPECT_EQ(s->send_elements, 1u);
  EXPECT_EQ(s->recv_elements, 2u);
  EXPECT_EQ(s->counted_bytes, 8u);
  EXPECT_FALSE(collective_shape(CollectiveOp::AllGather, 8, 4, 4));  // 2 floats cannot feed 4 ranks
}

TEST(CollectiveShape, ReduceScatterAndAllToAllRoundDownToWholeBlocks) {
  const auto rs = collective_shape(CollectiveOp::ReduceScatter, 100, 4, 4);  // 25 floats -> 4 blocks of 6
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->chunk_elements, 6u);
  EXPECT_EQ(rs->send_elements, 24u);
  EXPECT_EQ(rs->recv_elements, 6u);
  EXPECT_EQ(rs->counted_bytes, 96u);
  const auto a2a = collective_shape(CollectiveOp::AllToAll, 100, 4, 4);
  ASSERT_TRUE(a2a);
  EXPECT_EQ(a2a->send_elements, 24u);
  EXPECT_EQ(a2a->recv_elements, 24u);
  EXPECT_EQ(a2a->counted_bytes, 96u);
}

double field(const std::string& json, const std::string& name) {
  std::smatch m;
  const std::regex re("\"" + name + "\":([-0-9.eE+]+)");
  if (!std::regex_search(json, m, re)) ADD_FAILURE() << name << " missing in " << json;
  return std::stod(m[1]);
}

TEST(CollectiveRecord, AlgbwBusbwGoodputFromTheMedian) {
  // 1 GB allreduce on 4 ranks whose median iteration took 4 ms: algbw 250 GB/s, busbw 1.5 x 250,
  // goodput = buffer bytes (here 2 GB, e.g. send + receive) / time = 500 GB/s.
  BenchmarkInfo info{"nccl.allreduce", Category::Collective, "mpi-gpu", "", Metric::Bandwidth,
                     RankRange{2, 0}, {}, {}};
  Measurement m;
  m.accounting.bytes_per_op = 1e9;
  m.accounting.buffer_bytes = 2e9;
  m.accounting.collective = CollectiveAccounting{"allreduce", bus_factor(CollectiveOp::AllReduce, 4)};
  m.stats.median = 4e-3;
  m.stats.min = 3e-3;
  m.verification.ok = true;
  const std::string r = result_record(PointId{info, nullptr, 1000000000ull, 4}, m);
  EXPECT_DOUBLE_EQ(field(r, "algbw_gbps"), 250.0);
  EXPECT_DOUBLE_EQ(field(r, "busbw_gbps"), 375.0);
  EXPECT_DOUBLE_EQ(field(r, "goodput_gbps"), 500.0);
  EXPECT_DOUBLE_EQ(field(r, "bus_factor"), 1.5);
}

}  // namespace
}  // namespace commatlas
