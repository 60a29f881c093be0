// NICs from sysfs trees (engine/tests/fixtures/sysfs, written from documented layouts: see
// make_fixtures.py there), the NIC closest to each GPU, and the inter-node peak.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/node_facts.h"
#include "topology/nics.h"

namespace commatlas {
namespace {

std::string fixture(const char* name) {
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / "sysfs" / name).string();
}

std::vector<GpuInfo> gpus(std::initializer_list<const char*> bus_ids) {
  std::vector<GpuInfo> out;
  for (const char* id : bus_ids) {
    GpuInfo g;
    g.index = static_cast<int>(out.size());
    g.pci_bus_id = id;
    out.push_back(g);
  }
  return out;
}

const Nic* find(const std::vector<Nic>& nics, const std::string& name) {
  for (const Nic& n : nics)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(Nics, InfinibandHdrNode) {
  const auto nics = read_nics(fixture("ib_hdr"));
  // mlx5_0..2 and the 1 GbE port; ib0 is mlx5_0's IPoIB interface (same PCI device), lo is virtual.
  ASSERT_EQ(nics.size(), 4u);
  const Nic* hca = find(nics, "mlx5_0");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->kind, "infiniband");
  EXPECT_TRUE(hca->active);
  EXPECT_DOUBLE_EQ(hca->rate_gbit, 200);
  EXPECT_DOUBLE_EQ(hca->gbps(), 25);
  EXPECT_EQ(hca->pci_address, "0000:05:00.0");
  EXPECT_FALSE(find(nics, "mlx5_2")->active);  // "1: DOWN"
  EXPECT_EQ(find(nics, "eno1")->kind, "ethernet");
  EXPECT_DOUBLE_EQ(find(nics, "eno1")->rate_gbit, 1);
  EXPECT_EQ(find(nics, "ib0"), nullptr);

  const auto closest = closest_nics(gpus({"0000:03:00.0", "0000:04:00.0", "0000:43:00.0", "0000:44:00.0"}), nics,
                                    fixture("ib_hdr"));
  ASSERT_EQ(closest.size(), 4u);
  EXPECT_EQ(closest[0].nic, "mlx5_0");
  EXPECT_EQ(closest[0].pcie_hops, 2);  // GPU -> PCIe switch -> HCA
  EXPECT_EQ(closest[1].nic, "mlx5_0");
  EXPECT_EQ(closest[2].nic, "mlx5_1");
  EXPECT_EQ(closest[3].nic, "mlx5_1");
}

TEST(Nics, AlpsLikeNodeHasOneSlingshotNicPerGpu) {
  const auto nics = read_nics(fixture("alps"));
  ASSERT_EQ(nics.size(), 4u);
  for (const Nic& n : nics) {
    EXPECT_EQ(n.kind, "slingshot") << n.name;
    EXPECT_DOUBLE_EQ(n.rate_gbit, 200) << n.name;  // from hsnN's speed
    EXPECT_TRUE(n.active);
  }
  const auto closest = closest_nics(gpus({"0000:01:00.0", "0001:01:00.0", "0002:01:00.0", "0003:01:00.0"}), nics,
                                    fixture("alps"));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(closest[i].nic, "cxi" + std::to_string(i));
    EXPECT_EQ(closest[i].pcie_hops, 2);
  }
}

TEST(Nics, NodeWithoutNic) {
  const auto nics = read_nics(fixture("no_nic"));
  EXPECT_TRUE(nics.empty());
  const auto closest = closest_nics(gpus({"0000:01:00.0"}), nics, fixture("no_nic"));
  ASSERT_EQ(closest.size(), 1u);
  EXPECT_TRUE(closest[0].nic.empty());
  EXPECT_FALSE(nic_for_rank(nics, closest, 0));
}

TEST(Nics, PcieHopsAcrossRootComplexesGoThroughTheCpu) {
  EXPECT_EQ(pcie_hops({"pci0000:00", "0000:00:01.0", "0000:01:00.0"}, {"pci0000:00", "0000:00:01.0", "0000:02:00.0"}), 2);
  EXPECT_EQ(pcie_hops({"pci0000:00", "0000:00:01.0"}, {"pci0000:40", "0000:40:01.0"}), 4);
  EXPECT_EQ(pcie_hops({}, {"pci0000:00"}), -1);
}

TEST(Nics, InternodePeakIsTheSlowerEnd) {
  const auto hdr = read_nics(fixture("ib_hdr"));
  Nic slow = *find(hdr, "eno1");
  std::string why;
  const auto peak = internode_peak(*find(hdr, "mlx5_0"), "node-a", slow, "node-b", &why);
  ASSERT_TRUE(peak);
  EXPECT_DOUBLE_EQ(peak->gbps, 0.125);
  EXPECT_NE(peak->source.find("eno1 on node-b"), std::string::npos) << peak->source;
  EXPECT_FALSE(internode_peak(std::nullopt, "node-a", slow, "node-b", &why));
  EXPECT_NE(why.find("node-a has no active NIC"), std::string::npos) << why;
  slow.rate_gbit = 0;
  EXPECT_FALSE(internode_peak(*find(hdr, "mlx5_0"), "node-a", slow, "node-b", &why));
  EXPECT_NE(why.find("reports no link rate"), std::string::npos) << why;
}

TEST(Nics, EncodedNicSurvivesTheGather) {
  const auto alps = read_nics(fixture("alps"));
  const auto back = decode_nic(encode_nic(alps[2]));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, "cxi2");
  EXPECT_EQ(back->kind, "slingshot");
  EXPECT_DOUBLE_EQ(back->rate_gbit, 200);
  EXPECT_FALSE(decode_nic(encode_nic(std::nullopt)));
}


// The node's facts are one answer of (movement, bytes, placement): between nodes a message's peak
// is the slower NIC (both directions for bi), a collective's expected goodput says why there is
// none, and a bare reference loop keeps the movement's own answer.
Nic test_nic(const std::string& name, double gbit) {
  Nic n;
  n.name = name;
  n.kind = "infiniband";
  n.state = "ACTIVE";
  n.active = true;
  n.rate_gbit = gbit;
  n.rate_text = std::to_string(static_cast<int>(gbit)) + " Gb/sec";
  return n;
}

Movement between_nodes(Operation op, MoveDirection d) {
  Movement m = movement_between(op, d, Mechanism::MpiHost, host_memory(std::nullopt, Allocator::Malloc),
                                host_memory(std::nullopt, Allocator::Malloc));
  if (participants_of(kind_of(op)) == "all") m.participants = 2;
  m.same_node = false;
  return m;
}

TEST(NodeFacts, BetweenNodesTheSlowerNicIsThePeak) {
  Placement placement;
  placement.nodes = {"node-a", "node-b"};
  placement.rank_nics = {encode_nic(test_nic("mlx5_0/1", 200)), encode_nic(test_nic("mlx5_1/1", 100))};
  const NodeFacts& node = topology_node_facts();

  const PointFacts bi = node.facts(between_nodes(Operation::SendRecv, MoveDirection::Bi), 1 << 20, placement);
  EXPECT_TRUE(bi.peak.applies);
  EXPECT_DOUBLE_EQ(bi.peak.gbps, 25.0);  // 100 Gb/s = 12.5 GB/s per direction, both directions
  EXPECT_NE(bi.peak.source.find("mlx5_1/1 on node-b"), std::string::npos) << bi.peak.source;
  EXPECT_FALSE(bi.expected);

  const PointFacts allreduce = node.facts(between_nodes(Operation::Allreduce, MoveDirection::AllToAll), 1 << 20, placement);
  EXPECT_DOUBLE_EQ(allreduce.peak.gbps, 12.5);
  ASSERT_TRUE(allreduce.expected);
  EXPECT_EQ(allreduce.expected->gbps, 0);
  EXPECT_NE(allreduce.expected->text.find("span 2 nodes"), std::string::npos) << allreduce.expected->text;

  // A pattern is no collective call: no expected goodput, and the node's answer stands.
  const PointFacts pattern = node.facts(between_nodes(Operation::BucketedAllreduce, MoveDirection::AllToAll), 1 << 20, placement);
  EXPECT_FALSE(pattern.expected);
  EXPECT_EQ(pattern.peak.gbps, 0);

  Movement reference = between_nodes(Operation::PingPong, MoveDirection::HalfRoundTrip);
  reference.reference_of = "mpi.pingpong";
  const PointFacts bare = node.facts(reference, 8, placement);
  EXPECT_EQ(bare.peak.gbps, 0);
  EXPECT_NE(bare.peak.unknown.find("between nodes"), std::string::npos) << bare.peak.unknown;
}

TEST(NodeFacts, OneNodeHostCollectiveHasNoExpectedGoodput) {
  Placement placement;
  placement.nodes = {"node-a", "node-a"};
  Movement m = between_nodes(Operation::Allgather, MoveDirection::AllToAll);
  m.same_node = true;
  const PointFacts f = topology_node_facts().facts(m, 1 << 20, placement);
  ASSERT_TRUE(f.expected);
  EXPECT_EQ(f.expected->text, "no expected goodput: host buffers (the link graph is the GPUs')");
}

}  // namespace
}  // namespace commatlas
