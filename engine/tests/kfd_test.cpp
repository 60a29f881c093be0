// The KFD sysfs topology parser and xGMI peaks, from fixtures in the kernel's layout (see
// tests/fixtures/kfd/FIXTURE.md: generated from the studies' node descriptions). Pure C++: runs in
// the CUDA, HIP and CPU-only builds alike.
#include <gtest/gtest.h>

#include <filesystem>

#include "topology/answers.h"
#include "topology/goodput.h"
#include "topology/kfd.h"

namespace commatlas {
namespace {

std::string fixture(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / "kfd" / name).string();
}

std::vector<const KfdNode*> gpus(const KfdTopology& t) {
  std::vector<const KfdNode*> out;
  for (const KfdNode& n : t.nodes)
    if (n.is_gpu()) out.push_back(&n);
  return out;
}

// What build_topology makes of the fixture when every GPU is visible in KFD node order.
Topology topology_of(const KfdTopology& kfd) {
  TopologyAnswers answers;
  answers.kfd_available = true;
  const std::vector<const KfdNode*> g = gpus(kfd);
  for (std::size_t i = 0; i < g.size(); ++i) {
    GpuAnswers a;
    a.info.index = static_cast<int>(i);
    a.info.pci_bus_id = g[i]->pci_bus_id();
    EXPECT_TRUE(describe_from_kfd(kfd, a)) << a.info.pci_bus_id;
    answers.gpus.push_back(a);
  }
  for (std::size_t s = 0; s < g.size(); ++s)
    for (std::size_t d = 0; d < g.size(); ++d)
      if (s != d) answers.peers.push_back({static_cast<int>(s), static_cast<int>(d), true, true});
  return build_topology(answers);
}

TEST(KfdParser, ReadsNodesLinksAndBanks) {
  const KfdTopology t = read_kfd_topology(fixture("mi250x"));
  ASSERT_TRUE(t.error.empty()) << t.error;
  ASSERT_EQ(t.nodes.size(), 12u);  // 4 CPU (NPS4) + 8 GCD nodes
  const KfdNode& gcd0 = t.nodes[4];
  EXPECT_TRUE(gcd0.is_gpu());
  EXPECT_FALSE(t.nodes[0].is_gpu());
  EXPECT_EQ(gcd0.device_id, 0x740c);
  EXPECT_EQ(gcd0.gfx_target_version, 90010);
  EXPECT_EQ(gcd0.pci_bus_id(), "0000:c1:00.0");
  ASSERT_EQ(gcd0.io_links.size(), 8u);  // its CPU node + 7 other GCDs
  EXPECT_EQ(gcd0.io_links[0].type, kKfdIoLinkPcie);
  EXPECT_EQ(gcd0.io_links[1].type, kKfdIoLinkXgmi);
  EXPECT_EQ(gcd0.io_links[1].node_to, 5);
  EXPECT_EQ(gcd0.io_links[1].max_bandwidth_mbs, 200000u);
  ASSERT_EQ(gcd0.mem_banks.size(), 1u);
  EXPECT_EQ(gcd0.mem_banks[0].width_bits, 4096);
  EXPECT_EQ(t.gpu_at("0000:de:00.0"), &t.nodes[11]);
  EXPECT_EQ(t.gpu_at("0000:00:00.0"), nullptr);
}

TEST(KfdParser, MissingTreeSaysWhy) {
  const KfdTopology t = read_kfd_topology(fixture("no-such-node"));
  EXPECT_TRUE(t.nodes.empty());
  EXPECT_NE(t.error.find("not found"), std::string::npos) << t.error;
}

TEST(KfdPeaks, Mi300aEveryPairTwoLinksOf64) {
  const Topology topo = topology_of(read_kfd_topology(fixture("mi300a")));
  ASSERT_EQ(topo.gpus.size(), 4u);
  ASSERT_EQ(topo.pairs.size(), 12u);
  for (const GpuPair& p : topo.pairs) {
    EXPECT_EQ(p.link, "xgmi");
    EXPECT_EQ(p.xgmi_links, 2);
    EXPECT_DOUBLE_EQ(p.xgmi_link_gbps, 64);
    EXPECT_DOUBLE_EQ(p.peak_gbps, 128);
  }
  const std::optional<Peak> peak = peak_peer(topo, 0, 3);
  ASSERT_TRUE(peak);
  EXPECT_NE(peak->source.find("2 links x 64 GB/s"), std::string::npos) << peak->source;
  EXPECT_NE(peak->source.find("32 GT/s"), std::string::npos) << peak->source;
}

TEST(KfdPeaks, Mi250xFrontierLayout) {
  const Topology topo = topology_of(read_kfd_topology(fixture("mi250x")));
  ASSERT_EQ(topo.gpus.size(), 8u);
  auto peak = [&](int s, int d) { return topo.pair(s, d)->peak_gbps; };
  EXPECT_DOUBLE_EQ(peak(0, 1), 200);  // the two GCDs of one package: 4 links
  EXPECT_DOUBLE_EQ(peak(6, 7), 200);
  EXPECT_DOUBLE_EQ(peak(0, 6), 100);  // 2 links
  EXPECT_DOUBLE_EQ(peak(2, 4), 100);
  EXPECT_DOUBLE_EQ(peak(0, 2), 50);   // 1 link
  EXPECT_DOUBLE_EQ(peak(3, 7), 50);
  EXPECT_EQ(topo.pair(0, 1)->xgmi_links, 4);
  // No direct link: routed through another GCD, so no single-link peak is claimed.
  EXPECT_EQ(topo.pair(0, 3)->link, "xgmi");
  EXPECT_EQ(topo.pair(0, 3)->xgmi_links, 0);
  EXPECT_FALSE(peak_peer(topo, 0, 3));
  int direct = 0;
  for (const GpuPair& p : topo.pairs) direct += p.xgmi_links > 0;
  EXPECT_EQ(direct, 2 * 12);  // 12 linked GCD pairs, both directions
  // HBM from mem_banks where the runtime gave none: 2 x 1600 MHz x 4096 bit / 8.
  EXPECT_NEAR(topo.gpus[0].hbm_peak_gbps, 1638.4, 1e-9);
  EXPECT_EQ(topo.gpus[0].copy_engines, 5);
  EXPECT_EQ(topo.source, "kfd");
}

TEST(KfdPeaks, Mi300xFullyConnectedOneLink) {
  const Topology topo = topology_of(read_kfd_topology(fixture("mi300x")));
  ASSERT_EQ(topo.gpus.size(), 8u);
  ASSERT_EQ(topo.pairs.size(), 56u);
  for (const GpuPair& p : topo.pairs) {
    EXPECT_EQ(p.xgmi_links, 1);
    EXPECT_DOUBLE_EQ(p.peak_gbps, 50);
  }
  EXPECT_NE(topo.pair(2, 5)->peak_source.find("MI300X"), std::string::npos);
}

TEST(KfdPeaks, UnknownModelFallsBackToKernelMaxBandwidth) {
  KfdIoLink link;
  link.type = kKfdIoLinkXgmi;
  link.min_bandwidth_mbs = 50000;
  link.max_bandwidth_mbs = 150000;
  const XgmiAnswer x = xgmi_answer(link, 0x1234, "0000:01:00.0");
  EXPECT_EQ(x.links, 3);
  EXPECT_DOUBLE_EQ(x.link_gbps, 0);
  EXPECT_DOUBLE_EQ(x.peak_gbps, 150);
  EXPECT_EQ(x.source.rfind("KFD io_link max_bandwidth", 0), 0u) << x.source;
}

TEST(KfdPeaks, LinkCountFallsBackToTheKernelsPerLinkFigure) {
  KfdIoLink link;
  link.max_bandwidth_mbs = 100000;  // min_bandwidth unset
  EXPECT_EQ(xgmi_answer(link, 0x74a0, "").links, 2);
  EXPECT_DOUBLE_EQ(xgmi_answer(link, 0x74a0, "").peak_gbps, 128);
}

}  // namespace
}  // namespace commatlas

namespace commatlas {
namespace {

// The studies' expected collective goodput routes over the direct xGMI links of the node.
TEST(KfdPeaks, XgmiLinksFormTheGoodputGraph) {
  const Topology topo = topology_of(read_kfd_topology(fixture("mi250x")));
  const LinkGraph g = link_graph_of(topo);
  EXPECT_EQ(g.gpus, 8);
  EXPECT_EQ(g.bundles.size(), 12u);  // linked GCD pairs; routed pairs are no edge
  EXPECT_EQ(g.source, "xGMI between GPUs");
  const ExpectedAnswer e = expected_goodput_for("allreduce", 8, g);
  EXPECT_TRUE(e.gbps) << e.text;
}

}  // namespace
}  // namespace commatlas
