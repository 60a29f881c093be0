// The AMD GPU topology as the kernel's KFD driver publishes it in sysfs, and the peaks it implies.
//
// Pure C++ over a directory tree (no ROCm library), so every build reads the fixtures in
// tests/fixtures/kfd and checks the xGMI arithmetic without an AMD GPU. The HIP build's discovery
// (topology_cuda.cu) maps each HIP device to its KFD node by PCI location and takes its links here.
//
// Layout (drivers/gpu/drm/amd/amdkfd/kfd_topology.c): <root>/nodes/N/properties holds "key value"
// lines; nodes/N/io_links/M/properties and nodes/N/mem_banks/M/properties likewise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology/answers.h"

namespace commatlas {

constexpr const char* kKfdTopologyDir = "/sys/class/kfd/kfd/topology";

// HSA_IOLINKTYPE in ROCR-Runtime's hsakmttypes.h.
constexpr int kKfdIoLinkPcie = 2;
constexpr int kKfdIoLinkXgmi = 11;

// What the kernel assumes per xGMI link when it fills min/max_bandwidth (amdgpu_amdkfd.c,
// amdgpu_amdkfd_get_xgmi_bandwidth_mbytes: "x16 x 25Gbps", i.e. 50000 MB/s; min = one link).
constexpr double kKfdXgmiMbsPerLink = 16.0 * 25000 / 8;

struct KfdIoLink {
  int type = 0;
  int node_from = -1, node_to = -1;
  int weight = 0;
  std::uint64_t min_bandwidth_mbs = 0, max_bandwidth_mbs = 0;  // MB/s
};

struct KfdMemBank {
  int heap_type = 0;
  std::uint64_t size_in_bytes = 0;
  int width_bits = 0;
  int mem_clk_max_mhz = 0;
};

struct KfdNode {
  int id = -1;
  int cpu_cores_count = 0;
  int simd_count = 0;  // 0: a CPU node
  int gfx_target_version = 0;
  int vendor_id = 0, device_id = 0;
  std::uint32_t location_id = 0;  // PCI bus << 8 | device << 3 | function
  std::uint32_t domain = 0;
  int num_sdma_engines = 0, num_sdma_xgmi_engines = 0;
  std::uint64_t hive_id = 0;
  std::vector<KfdIoLink> io_links;
  std::vector<KfdMemBank> mem_banks;

  bool is_gpu() const { return simd_count > 0; }
  std::string pci_bus_id() const;  // canonical form ("0000:c1:00.0"), "" for a CPU node
};

struct KfdTopology {
  std::vector<KfdNode> nodes;  // by node id
  std::string error;           // why nothing was read ("" when nodes were found)

  const KfdNode* node(int id) const;
  const KfdNode* gpu_at(const std::string& canonical_bus_id) const;
};

// Never throws: a missing or unreadable tree gives no nodes and says why in error.
KfdTopology read_kfd_topology(const std::string& root = kKfdTopologyDir);

// Per-link, per-direction xGMI rate of a GPU model (by PCI device id), with its source.
struct XgmiLinkRate {
  const char* product = "";
  double gbps = 0;
  const char* source = "";
};
std::optional<XgmiLinkRate> xgmi_link_rate(int device_id);

// What one xGMI io_link can carry, per direction: link count x per-link rate where the model is
// known, else the kernel's max_bandwidth. links 0 and peak 0: no direct link (the kernel reports
// max_bandwidth 0 for peers reached through another GPU).
XgmiAnswer xgmi_answer(const KfdIoLink& link, int device_id, const std::string& remote_bus_id);

// Adds the GPU's xGMI links to other GPUs (and, where the HIP runtime left them unset, HBM width
// and clock, SDMA engine count) from its KFD node; false when no KFD node has its PCI location.
bool describe_from_kfd(const KfdTopology& kfd, GpuAnswers& gpu);

}  // namespace commatlas
