// Pure logic of the GPU suite (no GPU needed): variant lists, byte accounting, kernel shapes.
#include <gtest/gtest.h>

#include <set>

#include "backends/cuda/copy_plan.h"

namespace commatlas::cuda {
namespace {

int count_path(const std::vector<CopySpec>& specs, Path p) {
  int n = 0;
  for (const CopySpec& s : specs) n += s.path == p;
  return n;
}

TEST(GpuCopyPlan, OneGpuHasNoPeerVariants) {
  const auto specs = default_copy_specs(1);
  EXPECT_EQ(count_path(specs, Path::Peer), 0);
  EXPECT_GT(count_path(specs, Path::H2D), 0);
  EXPECT_GT(count_path(specs, Path::D2D), 0);
  EXPECT_TRUE(default_copy_specs(0).empty());
}

TEST(GpuCopyPlan, FourGpusSweepPeerOnlyForPairZeroOne) {
  const auto specs = default_copy_specs(4);
  EXPECT_EQ(count_path(specs, Path::Peer), 4);  // uni/bi x src/dst side
  std::set<std::string> sides;
  for (const CopySpec& s : specs)
    if (s.path == Path::Peer) {
      EXPECT_EQ(s.src_gpu, 0);
      EXPECT_EQ(s.dst_gpu, 1);
      sides.insert(to_string(s.side) + to_string(s.direction));
    }
  EXPECT_EQ(sides.size(), 4u);
  // Same number of non-peer variants whatever the GPU count.
  EXPECT_EQ(specs.size() - 4, default_copy_specs(1).size());
}

TEST(GpuCopyPlan, HostAllocatorsSweptForBothHostDirections) {
  for (Path path : {Path::H2D, Path::D2H}) {
    std::set<std::string> allocs;
    for (const CopySpec& s : default_copy_specs(1))
      if (s.path == path && s.direction == Direction::Uni)
        allocs.insert(to_string(s.host_allocator) + "/" + s.first_touch);
    EXPECT_EQ(allocs, (std::set<std::string>{"pinned/cpu", "registered/cpu", "pageable/cpu", "managed/cpu", "managed/gpu"}))
        << to_string(path);
  }
}

TEST(GpuCopyPlan, ParamsRoundTrip) {
  for (const CopySpec& s : default_copy_specs(2)) {
    Params p = to_params(s);
    add_shape(p, KernelShape{});
    const CopySpec back = copy_spec_from(p);
    EXPECT_EQ(back.path, s.path);
    EXPECT_EQ(back.direction, s.direction);
    EXPECT_EQ(back.host_allocator, s.host_allocator);
    EXPECT_EQ(back.first_touch, s.first_touch);
    EXPECT_EQ(back.device_allocator, s.device_allocator);
    EXPECT_EQ(back.src_gpu, s.src_gpu);
    EXPECT_EQ(back.dst_gpu, s.dst_gpu);
    EXPECT_EQ(back.side, s.side);
  }
}

TEST(GpuCopyPlan, BidirectionalCountsBothDirections) {
  const std::uint64_t size = 1 << 20;
  CopySpec peer;
  peer.path = Path::Peer;
  peer.dst_gpu = 1;
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(peer), size), size);
  peer.direction = Direction::Bi;
  const auto legs = legs_of(peer);
  ASSERT_EQ(legs.size(), 2u);
  EXPECT_EQ(legs[1].src.gpu, 1);
  EXPECT_EQ(legs[1].dst.gpu, 0);
  EXPECT_DOUBLE_EQ(bytes_per_op(legs, size), 2.0 * size);

  CopySpec h2d;
  h2d.path = Path::H2D;
  h2d.host_allocator = Allocator::Pinned;
  h2d.direction = Direction::Bi;
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(h2d), size), 2.0 * size);
}

TEST(GpuCopyPlan, LocalCopyCountsReadPlusWrite) {
  CopySpec local;  // d2d on GPU 0
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(local), 4096), 2.0 * 4096);
  local.device_allocator = Allocator::DevicePool;
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(local), 4096), 2.0 * 4096);
}

TEST(GpuCopyPlan, ManagedHostBufferAccountingFollowsWhereThePagesAre) {
  CopySpec c;
  c.path = Path::H2D;
  c.host_allocator = Allocator::Managed;
  c.first_touch = "cpu";  // kept on the host by advice: crosses PCIe, counted once
  EXPECT_EQ(legs_of(c).front().src.hint, kHostPreferred);
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(c), 100), 100.0);
  EXPECT_EQ(to_params(c).text("managed_hint"), kHostPreferred);
  c.first_touch = "gpu";  // pages on the GPU: a copy inside HBM, read + write
  EXPECT_TRUE(legs_of(c).front().src.hint.empty());
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(c), 100), 200.0);
  c.host_allocator = Allocator::Pinned;
  c.first_touch = "cpu";
  EXPECT_DOUBLE_EQ(bytes_per_op(legs_of(c), 100), 100.0);
  EXPECT_FALSE(to_params(c).has("managed_hint"));
}

TEST(GpuCopyPlan, EngineSideChoosesTheDrivingGpu) {
  CopySpec peer;
  peer.path = Path::Peer;
  peer.src_gpu = 2;
  peer.dst_gpu = 3;
  peer.side = Side::Src;
  EXPECT_EQ(legs_of(peer).front().exec_gpu, 2);
  peer.side = Side::Dst;
  EXPECT_EQ(legs_of(peer).front().exec_gpu, 3);
  peer.direction = Direction::Bi;
  EXPECT_EQ(legs_of(peer).back().exec_gpu, 2);  // the mirror copy 3 -> 2 read by its destination
}

TEST(GpuCopyPlan, FanoutSumsEveryCopy) {
  const auto out = fanout_legs(Fan::OneToAll, 2, 4, Side::Src);
  ASSERT_EQ(out.size(), 3u);
  for (const Leg& l : out) {
    EXPECT_EQ(l.src.gpu, 2);
    EXPECT_NE(l.dst.gpu, 2);
    EXPECT_EQ(l.exec_gpu, 2);
  }
  EXPECT_DOUBLE_EQ(bytes_per_op(out, 1000), 3000.0);
  for (const Leg& l : fanout_legs(Fan::AllToOne, 0, 4, Side::Dst)) {
    EXPECT_EQ(l.dst.gpu, 0);
    EXPECT_EQ(l.exec_gpu, 0);
  }
  EXPECT_TRUE(fanout_legs(Fan::OneToAll, 0, 1, Side::Src).empty());
}

TEST(GpuCopyPlan, MatrixPairs) {
  EXPECT_EQ(matrix_pairs(4, Direction::Uni).size(), 12u);
  EXPECT_EQ(matrix_pairs(4, Direction::Bi).size(), 6u);
  EXPECT_EQ(matrix_pairs(2, Direction::Bi).front(), std::make_pair(0, 1));
  EXPECT_TRUE(matrix_pairs(1, Direction::Uni).empty());
}

TEST(GpuCopyPlan, NeedsTwoGpus) {
  EXPECT_EQ(needs_two_gpus(1).value_or(""), "needs 2 GPUs, found 1");
  EXPECT_FALSE(needs_two_gpus(2).has_value());
}

TEST(GpuKernelShape, Validation) {
  EXPECT_FALSE(shape_problem(KernelShape{}).has_value());
  EXPECT_FALSE(shape_problem(KernelShape{4, 1, 8}).has_value());
  EXPECT_TRUE(shape_problem(KernelShape{8, 4, 4}).has_value());
  EXPECT_TRUE(shape_problem(KernelShape{16, 2, 4}).has_value());
  EXPECT_TRUE(shape_problem(KernelShape{16, 4, 0}).has_value());
  EXPECT_TRUE(shape_problem(KernelShape{16, 4, 9}).has_value());
  Params bad = to_params(CopySpec{});
  add_shape(bad, KernelShape{16, 4, 4});
  bad.set("vector_bytes", std::int64_t{8});
  EXPECT_THROW(shape_from(bad), UsageError);
  Params good = to_params(CopySpec{});
  add_shape(good, KernelShape{4, 1, 2});
  EXPECT_EQ(shape_from(good), (KernelShape{4, 1, 2}));
}

}  // namespace
}  // namespace commatlas::cuda
