// peak_of: the one function that gives a record its peak, tested on the recorded shape of a
// 2 x H200 node (NVLink4 through NVSwitch, PCIe Gen5 x16, 50 MiB L2) without a GPU.
#include <gtest/gtest.h>

#include "topology/answers.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

Topology h200x2() {
  TopologyAnswers a;
  for (int i = 0; i < 2; ++i) {
    GpuAnswers g;
    g.info.index = i;
    g.info.pci_bus_id = i == 0 ? "0000:18:00.0" : "0000:2a:00.0";
    g.info.memory_clock_mhz = 3201;
    g.info.memory_bus_width_bits = 6016;
    g.info.l2_cache_bytes = 50ull << 20;
    g.info.pcie = PcieLink{5, 5, 16, 16, 0, "NVML"};
    g.compute_major = 9;
    g.nvlink_speed_gbps = 26.5625;
    for (int link = 0; link < 18; ++link) g.nvlinks.push_back({"0000:c0:00.0", LinkRemote::Switch});
    a.gpus.push_back(g);
  }
  a.peers = {{0, 1, true, true}, {1, 0, true, true}};
  a.nvml_available = true;
  return build_topology(a);
}

constexpr std::uint64_t MiB = 1ull << 20;
constexpr std::uint64_t kCpuCache = 32 * MiB;

Movement copy(Endpoint from, Endpoint to, MoveDirection d = MoveDirection::Uni) {
  Movement m = movement_between(Operation::Copy, d, Mechanism::CopyEngine, from, to);
  m.cache_working_set_per_byte = d == MoveDirection::Bi ? 4 : 2;
  return m;
}

TEST(PeakOf, HostToGpuIsThePcieLinkAndBiDoublesIt) {
  const Topology t = h200x2();
  const auto uni = peak_of(copy(host_memory(std::nullopt, Allocator::Pinned), gpu_memory(0, Allocator::Device)),
                           256 * MiB, t, kCpuCache);
  EXPECT_TRUE(uni.applies);
  EXPECT_NEAR(uni.gbps, 63.015, 1e-3);
  EXPECT_FALSE(uni.cache_resident);  // crosses a link: no cache makes it faster
  const auto bi =
      peak_of(copy(host_memory(std::nullopt, Allocator::Pinned), gpu_memory(0, Allocator::Device), MoveDirection::Bi),
              256 * MiB, t, kCpuCache);
  EXPECT_NEAR(bi.gbps, 2 * 63.015, 2e-3);
}

// A figure once reported as 101% of peak: 16 MiB "h2d" from GPU-touched managed memory is a copy
// inside GPU 0, 32 MiB of source + destination that fits the 50 MiB L2: no HBM peak, so no 101%.
TEST(PeakOf, LocalCopyInL2IsCacheResidentWithoutANumber) {
  const Topology t = h200x2();
  const Movement local = copy(gpu_memory(0, Allocator::Managed), gpu_memory(0, Allocator::Device));
  const auto small = peak_of(local, 16 * MiB, t, kCpuCache);
  EXPECT_TRUE(small.cache_resident);
  EXPECT_EQ(small.gbps, 0);
  EXPECT_NE(small.unknown.find("fits GPU 0's 50 MiB L2"), std::string::npos) << small.unknown;
  const auto large = peak_of(local, 256 * MiB, t, kCpuCache);
  EXPECT_FALSE(large.cache_resident);
  EXPECT_NEAR(large.gbps, 4814.304, 1e-3);
}

TEST(PeakOf, PeerCopiesUseThePairAndSumBothDirections) {
  const Topology t = h200x2();
  EXPECT_DOUBLE_EQ(
      peak_of(copy(gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device)), MiB, t, kCpuCache).gbps,
      478.125);
  EXPECT_DOUBLE_EQ(peak_of(copy(gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device), MoveDirection::Bi),
                           MiB, t, kCpuCache)
                       .gbps,
                   956.25);
}

TEST(PeakOf, HostMemoryAndHostBufferMpiHaveNoPeakButAReason) {
  const Topology t = h200x2();
  Movement memcpy_move = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                                          host_memory(0, Allocator::Pageable), host_memory(0, Allocator::Pageable));
  memcpy_move.cache_working_set_per_byte = 2;
  const auto big = peak_of(memcpy_move, 1024 * MiB, t, kCpuCache);
  EXPECT_TRUE(big.applies);
  EXPECT_EQ(big.gbps, 0);
  EXPECT_NE(big.unknown.find("no host memory peak"), std::string::npos) << big.unknown;
  EXPECT_TRUE(peak_of(memcpy_move, 4 * MiB, t, kCpuCache).cache_resident);

  Endpoint a = host_memory(std::nullopt, Allocator::Pageable), b = a;
  a.rank = 0;
  b.rank = 1;
  const auto mpi = peak_of(movement_between(Operation::SendRecv, MoveDirection::Uni, Mechanism::MpiHost, a, b), MiB, t,
                           kCpuCache);
  EXPECT_EQ(mpi.gbps, 0);
  EXPECT_NE(mpi.unknown.find("host buffers"), std::string::npos) << mpi.unknown;
}

TEST(PeakOf, CollectivesCompareWithTheLinkAndNodesApartAreUnknown) {
  const Topology t = h200x2();
  Movement nccl =
      movement_between(Operation::Allreduce, MoveDirection::AllToAll, Mechanism::Nccl,
                       gpu_memory(std::nullopt, Allocator::Device), gpu_memory(std::nullopt, Allocator::Device));
  EXPECT_DOUBLE_EQ(peak_of(nccl, MiB, t, kCpuCache).gbps, 478.125);
  nccl.same_node = false;
  const auto apart = peak_of(nccl, MiB, t, kCpuCache);
  EXPECT_EQ(apart.gbps, 0);
  EXPECT_NE(apart.unknown.find("between nodes"), std::string::npos);
}

TEST(PeakOf, LatencyChasesClaimNoBandwidthButCanBeCacheResident) {
  const Topology t = h200x2();
  Movement chase = movement_between(Operation::LoadLatency, MoveDirection::Uni, Mechanism::GpuLoadStore,
                                    gpu_memory(0, Allocator::Device), gpu_processor(0));
  chase.cache_working_set_per_byte = 1;
  const auto in_l2 = peak_of(chase, MiB, t, kCpuCache);
  EXPECT_FALSE(in_l2.applies);
  EXPECT_TRUE(in_l2.cache_resident);
  EXPECT_FALSE(peak_of(chase, 1024 * MiB, t, kCpuCache).cache_resident);
}

TEST(PeakOf, StreamCopyOverALinkCountsReadsInAndWritesOut) {
  const Topology t = h200x2();
  Movement pinned =
      movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::GpuLoadStore,
                       host_memory(std::nullopt, Allocator::Pinned), host_memory(std::nullopt, Allocator::Pinned));
  pinned.by = gpu_processor(0);
  EXPECT_NEAR(peak_of(pinned, MiB, t, kCpuCache).gbps, 2 * 63.015, 2e-3);
  Movement peer = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::GpuLoadStore,
                                   gpu_memory(1, Allocator::Device), gpu_memory(1, Allocator::Device));
  peer.by = gpu_processor(0);
  peer.cache_working_set_per_byte = 2;
  const auto p = peak_of(peer, MiB, t, kCpuCache);
  EXPECT_FALSE(p.cache_resident);  // GPU 0's SMs reach GPU 1's memory over NVLink
  EXPECT_DOUBLE_EQ(p.gbps, 956.25);
  // The same copy run by GPU 1's own SMs is local: its HBM, and its L2 at this size.
  peer.by = gpu_processor(1);
  EXPECT_TRUE(peak_of(peer, MiB, t, kCpuCache).cache_resident);
  EXPECT_NEAR(peak_of(peer, 256 * MiB, t, kCpuCache).gbps, 4814.304, 1e-3);
}

}  // namespace
}  // namespace commatlas
