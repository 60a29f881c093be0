// Topology from recorded answers: link counting, pair peaks, PCIe/HBM arithmetic, the JSON shape.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "topology/answers.h"
#include "topology/sysfs.h"

namespace commatlas {
namespace {

const char* const kH200BusIds[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"};

GpuAnswers h200(int index) {
  GpuAnswers a;
  a.info.index = index;
  a.info.name = "NVIDIA H200";
  a.info.pci_bus_id = kH200BusIds[index];
  a.info.sm_count = 132;
  a.info.memory_bytes = 150754820096ULL;
  a.info.memory_clock_mhz = 3201;
  a.info.memory_bus_width_bits = 6016;
  a.info.copy_engines = 3;
  a.info.l2_cache_bytes = 50ull << 20;  // cudaDevAttrL2CacheSize on Hopper (H100/H200): 52428800
  a.info.numa_node = 0;
  a.info.cpu_affinity = "0-63";
  a.info.concurrent_managed_access = true;
  a.info.pcie = PcieLink{5, 5, 16, 16, 0, "NVML"};
  a.compute_major = 9;
  a.nvml_answered = true;
  a.nvml_nvlink_version = 7;  // what recent drivers answer on Hopper, though it is NVLink4
  a.nvlink_speed_gbps = 26.5625;
  // 18 NVLink4 links, all into the NVSwitches (NVML reports the switch's bus id, not a GPU).
  for (int link = 0; link < 18; ++link) a.nvlinks.push_back({"0000:c0:00.0", LinkRemote::Switch});
  return a;
}

std::vector<PeerAnswer> all_peers(int n, bool can_access, bool atomics) {
  std::vector<PeerAnswer> peers;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) peers.push_back({s, d, can_access, atomics});
  return peers;
}

TopologyAnswers h200x4_answers() {
  TopologyAnswers a;
  for (int i = 0; i < 4; ++i) a.gpus.push_back(h200(i));
  a.peers = all_peers(4, true, true);
  a.nvml_available = true;
  a.nvml_detail = "12.570.124.06, driver 570.124.06";
  return a;
}

// Two PCIe-only GPUs on a machine without NVML: PCIe facts came from sysfs.
TopologyAnswers pcie_pair_answers() {
  TopologyAnswers a;
  for (int i = 0; i < 2; ++i) {
    GpuAnswers g;
    g.info.index = i;
    g.info.name = "NVIDIA L40S";
    g.info.pci_bus_id = i == 0 ? "0000:01:00.0" : "0000:81:00.0";
    g.info.memory_clock_mhz = 9001;
    g.info.memory_bus_width_bits = 384;
    g.info.pcie = PcieLink{4, 4, 16, 16, 0, "sysfs"};
    g.compute_major = 8;
    g.compute_minor = 9;
    a.gpus.push_back(g);
  }
  a.peers = all_peers(2, true, false);
  a.nvml_detail = "libnvidia-ml.so.1 not loadable";
  return a;
}

std::string topology_json(const Topology& topo) {
  JsonWriter w;
  write_topology_json(topo, w);
  return w.str();
}

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "fixtures" /
         "topology" / name;
}

TEST(PcieArithmetic, MatchesHandComputedRates) {
  EXPECT_NEAR(pcie_gbps_per_direction(5, 16), 32.0 * 128 / 130 * 16 / 8, 1e-9);  // 63.015
  EXPECT_NEAR(pcie_gbps_per_direction(5, 16), 63.0, 0.02);
  EXPECT_NEAR(pcie_gbps_per_direction(4, 16), 31.5077, 1e-4);
  EXPECT_NEAR(pcie_gbps_per_direction(3, 8), 7.8769, 1e-4);
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(2, 8), 4.0);   // 5 GT/s x 8/10 x 8 lanes / 8
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(1, 1), 0.25);  // 2.5 GT/s x 8/10 / 8
  EXPECT_EQ(pcie_gbps_per_direction(0, 16), 0);
  EXPECT_EQ(pcie_gbps_per_direction(7, 16), 0);
  EXPECT_EQ(pcie_gbps_per_direction(5, 0), 0);
}

TEST(HbmArithmetic, DoubleDataRateTimesBusWidth) {
  EXPECT_NEAR(hbm_gbps(3201, 6016), 4814.304, 1e-6);  // H200: 2 x 3201e6 x 6016 / 8
  EXPECT_NEAR(hbm_gbps(2619, 5120), 3352.32, 1e-6);   // H100 SXM
  EXPECT_EQ(hbm_gbps(0, 6016), 0);
}

TEST(NvlinkGeneration, ArchitectureOverridesNvmlVersion) {
  EXPECT_EQ(nvlink_generation(9, 0, 7), 4);  // Hopper even where NVML says 5.0
  EXPECT_EQ(nvlink_generation(8, 0, 0), 3);
  EXPECT_EQ(nvlink_generation(0, 0, 6), 4);  // unknown architecture: NVML's enum 6 = 4.0
  EXPECT_EQ(nvlink_generation(0, 0, 0), 0);
  EXPECT_DOUBLE_EQ(nvlink_table_gbps(4), 26.5625);
}

TEST(BusId, CanonicalFormIsSysfs) {
  EXPECT_EQ(canonical_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(canonical_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(canonical_bus_id("garbage"), "");
}

TEST(TopologyH200x4, EveryPairGetsAllLinksThroughNvswitch) {
  const Topology t = build_topology(h200x4_answers());
  ASSERT_EQ(t.gpus.size(), 4u);
  ASSERT_EQ(t.pairs.size(), 12u);
  EXPECT_EQ(t.source, "nvml");
  for (const GpuPair& p : t.pairs) {
    EXPECT_EQ(p.link, "nvlink");
    EXPECT_EQ(p.nvlink_links, 18);
    EXPECT_DOUBLE_EQ(p.nvlink_link_gbps, 26.5625);
    EXPECT_DOUBLE_EQ(p.peak_gbps, 478.125);
  }
  EXPECT_NEAR(t.gpus[2].pcie.peak_gbps, 63.015, 1e-3);
  EXPECT_NEAR(t.gpus[2].hbm_peak_gbps, 4814.304, 1e-6);
}

TEST(TopologyH200x4, PeaksSayWhereTheyCameFrom) {
  const Topology t = build_topology(h200x4_answers());
  const auto peer = peak_peer(t, 1, 3);
  ASSERT_TRUE(peer);
  EXPECT_DOUBLE_EQ(peer->gbps, 478.125);
  EXPECT_NE(peer->source.find("NVLink4: 18 links x 26.5625 GB/s (NVML"), std::string::npos) << peer->source;
  const auto host = peak_host_link(t, 0);
  ASSERT_TRUE(host);
  EXPECT_NE(host->source.find("PCIe Gen5 x16"), std::string::npos) << host->source;
  const auto hbm = peak_device_memory(t, 0);
  ASSERT_TRUE(hbm);
  EXPECT_NE(hbm->source.find("read + written"), std::string::npos) << hbm->source;
  EXPECT_FALSE(peak_peer(t, 0, 0));
  EXPECT_FALSE(peak_host_link(t, 4));
}

TEST(TopologyH200x4, JsonMatchesTheRecordedFixture) {
  const std::string json = topology_json(build_topology(h200x4_answers()));
  const auto path = fixture("h200x4.json");
  if (std::getenv("COMMATLAS_REGENERATE_FIXTURES")) std::ofstream(path) << json << '\n';
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing fixture " << path;
  std::stringstream recorded;
  recorded << in.rdbuf();
  EXPECT_EQ(recorded.str(), json + "\n");
}

TEST(TopologyDirectLinks, CountsLinksPerRemoteGpuAndFallsBackToTable) {
  TopologyAnswers a;
  for (int i = 0; i < 3; ++i) {
    GpuAnswers g;
    g.info.index = i;
    g.info.pci_bus_id = "0000:0" + std::to_string(i + 1) + ":00.0";
    g.compute_major = 8;  // A100: NVLink3, and NVML gave no speed
    a.gpus.push_back(g);
  }
  // GPU0 <-> GPU1 by 4 links, GPU0 <-> GPU2 by 2; GPU1 and GPU2 not linked.
  for (int k = 0; k < 4; ++k) {
    a.gpus[0].nvlinks.push_back({"0000:02:00.0", LinkRemote::Gpu});
    a.gpus[1].nvlinks.push_back({"0000:01:00.0", LinkRemote::Gpu});
  }
  for (int k = 0; k < 2; ++k) {
    a.gpus[0].nvlinks.push_back({"0000:03:00.0", LinkRemote::Gpu});
    a.gpus[2].nvlinks.push_back({"0000:01:00.0", LinkRemote::Gpu});
  }
  a.peers = all_peers(3, true, true);
  a.nvml_available = true;
  const Topology t = build_topology(a);
  EXPECT_EQ(t.pair(0, 1)->nvlink_links, 4);
  EXPECT_DOUBLE_EQ(t.pair(0, 1)->peak_gbps, 100);
  EXPECT_EQ(t.pair(2, 0)->nvlink_links, 2);
  EXPECT_DOUBLE_EQ(t.pair(2, 0)->peak_gbps, 50);
  EXPECT_NE(t.pair(2, 0)->peak_source.find("table"), std::string::npos);
  // Peer access without NVLink and without PCIe facts: a PCIe path with no known peak.
  EXPECT_EQ(t.pair(1, 2)->link, "pcie");
  EXPECT_EQ(t.pair(1, 2)->peak_gbps, 0);
  EXPECT_FALSE(peak_peer(t, 1, 2));
}

TEST(TopologyPcieOnly, PeersGoThroughPcieWithoutNvml) {
  const Topology t = build_topology(pcie_pair_answers());
  EXPECT_EQ(t.source, "cuda_runtime");
  EXPECT_FALSE(t.nvml_available);
  ASSERT_EQ(t.pairs.size(), 2u);
  const GpuPair* p = t.pair(0, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->link, "pcie");
  EXPECT_EQ(p->nvlink_links, 0);
  EXPECT_FALSE(p->peer_atomics);
  EXPECT_NEAR(p->peak_gbps, 31.5077, 1e-4);
  EXPECT_NE(topology_json(t).find("\"nvml\":{\"available\":false"), std::string::npos);
}

TEST(TopologyPcieOnly, NoPeerAccessMeansNoPath) {
  TopologyAnswers a = pcie_pair_answers();
  a.peers = all_peers(2, false, false);
  const Topology t = build_topology(a);
  EXPECT_EQ(t.pair(0, 1)->link, "none");
  EXPECT_FALSE(peak_peer(t, 0, 1));
}

TEST(TopologyNoGpu, CarriesTheReason) {
  TopologyAnswers a;
  a.no_gpu_reason = "no NVIDIA driver";
  const Topology t = build_topology(a);
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_TRUE(t.pairs.empty());
  const std::string json = topology_json(t);
  EXPECT_NE(json.find("\"gpus\":[]"), std::string::npos);
  EXPECT_NE(json.find("\"reason\":\"no NVIDIA driver\""), std::string::npos);
  EXPECT_FALSE(peak_device_memory(t, 0));
  EXPECT_EQ(build_topology(TopologyAnswers{}).no_gpu_reason, "no GPU found");
}

TEST(GpuTopology, ThisProcessAnswersWithGpusOrAReason) {
  const Topology& t = gpu_topology();
  EXPECT_EQ(&t, &gpu_topology());  // discovered once
  EXPECT_TRUE(!t.gpus.empty() || !t.no_gpu_reason.empty());
}

TEST(Sysfs, ReadsNumaCpusAndPcieLink) {
  const auto root = std::filesystem::temp_directory_path() / ("commatlas-sysfs-" + std::to_string(getpid()));
  const auto dev = root / "0000:18:00.0";
  std::filesystem::create_directories(dev);
  auto write = [&](const char* name, const char* text) { std::ofstream(dev / name) << text << '\n'; };
  write("numa_node", "1");
  write("local_cpulist", "32-63");
  write("max_link_speed", "32.0 GT/s PCIe");
  write("current_link_speed", "2.5 GT/s PCIe");
  write("max_link_width", "16");
  write("current_link_width", "16");
  GpuInfo g;
  g.pci_bus_id = "0000:18:00.0";
  read_pci_sysfs(g, root.string());
  std::filesystem::remove_all(root);
  EXPECT_EQ(g.numa_node, 1);
  EXPECT_EQ(g.cpu_affinity, "32-63");
  EXPECT_EQ(g.pcie.gen_max, 5);
  EXPECT_EQ(g.pcie.gen_current, 1);
  EXPECT_EQ(g.pcie.width_max, 16);
  EXPECT_EQ(g.pcie.source, "sysfs");
  EXPECT_EQ(pcie_generation_of_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcie_generation_of_speed("Unknown"), 0);
}

}  // namespace
}  // namespace commatlas
