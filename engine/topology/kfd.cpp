#include "topology/kfd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

namespace commatlas {
namespace fs = std::filesystem;
namespace {

using Properties = std::map<std::string, std::string>;

Properties read_properties(const fs::path& file) {
  Properties props;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, value;
    if (words >> key >> value) props[key] = value;
  }
  return props;
}

std::uint64_t number(const Properties& props, const char* key) {
  const auto it = props.find(key);
  if (it == props.end()) return 0;
  // KFD writes decimal; a malformed value reads as unknown (0) rather than failing discovery.
  char* end = nullptr;
  const unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
  return end && *end == '\0' ? v : 0;
}

int small(const Properties& props, const char* key) { return static_cast<int>(number(props, key)); }

// The numbered sub-folders of a folder (nodes/0, nodes/1, ...), in numeric order.
std::vector<std::pair<int, fs::path>> numbered(const fs::path& dir) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    out.emplace_back(std::stoi(name), it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string format_gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string KfdNode::pci_bus_id() const {
  if (!is_gpu()) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, (location_id >> 8) & 0xff, (location_id >> 3) & 0x1f,
                location_id & 0x7);
  return buf;
}

const KfdNode* KfdTopology::node(int id) const {
  for (const KfdNode& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const KfdNode* KfdTopology::gpu_at(const std::string& canonical_bus_id) const {
  if (canonical_bus_id.empty()) return nullptr;
  for (const KfdNode& n : nodes)
    if (n.is_gpu() && n.pci_bus_id() == canonical_bus_id) return &n;
  return nullptr;
}

KfdTopology read_kfd_topology(const std::string& root) {
  KfdTopology topo;
  const fs::path nodes_dir = fs::path(root) / "nodes";
  std::error_code ec;
  if (!fs::is_directory(nodes_dir, ec)) {
    topo.error = nodes_dir.string() + " not found (no amdgpu/KFD driver loaded)";
    return topo;
  }
  for (const auto& [id, dir] : numbered(nodes_dir)) {
    const Properties p = read_properties(dir / "properties");
    if (p.empty()) continue;
    KfdNode n;
    n.id = id;
    n.cpu_cores_count = small(p, "cpu_cores_count");
    n.simd_count = small(p, "simd_count");
    n.gfx_target_version = small(p, "gfx_target_version");
    n.vendor_id = small(p, "vendor_id");
    n.device_id = small(p, "device_id");
    n.location_id = static_cast<std::uint32_t>(number(p, "location_id"));
    n.domain = static_cast<std::uint32_t>(number(p, "domain"));
    n.num_sdma_engines = small(p, "num_sdma_engines");
    n.num_sdma_xgmi_engines = small(p, "num_sdma_xgmi_engines");
    n.hive_id = number(p, "hive_id");
    for (const auto& [link_id, link_dir] : numbered(dir / "io_links")) {
      const Properties l = read_properties(link_dir / "properties");
      if (l.empty()) continue;
      KfdIoLink link;
      link.type = small(l, "type");
      link.node_from = small(l, "node_from");
      link.node_to = small(l, "node_to");
      link.weight = small(l, "weight");
      link.min_bandwidth_mbs = number(l, "min_bandwidth");
      link.max_bandwidth_mbs = number(l, "max_bandwidth");
      n.io_links.push_back(link);
    }
    for (const auto& [bank_id, bank_dir] : numbered(dir / "mem_banks")) {
      const Properties b = read_properties(bank_dir / "properties");
      if (b.empty()) continue;
      KfdMemBank bank;
      bank.heap_type = small(b, "heap_type");
      bank.size_in_bytes = number(b, "size_in_bytes");
      bank.width_bits = small(b, "width");
      bank.mem_clk_max_mhz = small(b, "mem_clk_max");
      n.mem_banks.push_back(bank);
    }
    topo.nodes.push_back(std::move(n));
  }
  if (topo.nodes.empty()) topo.error = "no readable node under " + nodes_dir.string();
  return topo;
}

std::optional<XgmiLinkRate> xgmi_link_rate(int device_id) {
  switch (device_id) {
    case 0x740c:  // MI250X and MI250 (gfx90a)
      return XgmiLinkRate{"MI250X", 50,
                          "50 GB/s per direction per Infinity Fabric link (MI250X/Frontier node description)"};
    case 0x74a0:  // MI300A (gfx942)
      return XgmiLinkRate{"MI300A", 64, "16 bit x 32 GT/s = 64 GB/s per direction per link (MI300A study)"};
    case 0x74a1:  // MI300X (gfx942)
      return XgmiLinkRate{"MI300X", 50, "50 GB/s per direction per link (as the MI300X study states it)"};
    default:
      return std::nullopt;
  }
}

XgmiAnswer xgmi_answer(const KfdIoLink& link, int device_id, const std::string& remote_bus_id) {
  XgmiAnswer x;
  x.remote_bus_id = remote_bus_id;
  if (link.max_bandwidth_mbs == 0) {
    x.source = "no direct xGMI link (KFD io_link max_bandwidth 0: routed through another GPU)";
    return x;
  }
  // The kernel fills min_bandwidth with one link and max_bandwidth with all of them.
  const double per_link_mbs = link.min_bandwidth_mbs > 0 ? static_cast<double>(link.min_bandwidth_mbs) : kKfdXgmiMbsPerLink;
  x.links = std::max(1, static_cast<int>(std::lround(static_cast<double>(link.max_bandwidth_mbs) / per_link_mbs)));
  const std::optional<XgmiLinkRate> rate = xgmi_link_rate(device_id);
  if (rate) {
    x.link_gbps = rate->gbps;
    x.peak_gbps = x.links * rate->gbps;
    x.source = "xGMI: " + std::to_string(x.links) + (x.links == 1 ? " link" : " links") + " x " +
               format_gbps(rate->gbps) + " GB/s (" + rate->product + ": " + rate->source +
               "; link count from KFD io_link max_bandwidth / min_bandwidth)";
  } else {
    x.peak_gbps = static_cast<double>(link.max_bandwidth_mbs) / 1000.0;
    x.source = "KFD io_link max_bandwidth (" + std::to_string(link.max_bandwidth_mbs) +
               " MB/s; device id " + std::to_string(device_id) + " has no per-link rate in commatlas's table)";
  }
  return x;
}

bool describe_from_kfd(const KfdTopology& kfd, GpuAnswers& gpu) {
  const KfdNode* self = kfd.gpu_at(gpu.info.pci_bus_id);
  if (!self) return false;
  for (const KfdIoLink& link : self->io_links) {
    if (link.type != kKfdIoLinkXgmi) continue;
    const KfdNode* remote = kfd.node(link.node_to);
    if (!remote || !remote->is_gpu()) continue;  // an APU's xGMI link to its own CPU is not a peer
    gpu.xgmi.push_back(xgmi_answer(link, self->device_id, remote->pci_bus_id()));
  }
  // The HIP runtime answers these on a GPU; KFD fills only what it left unset.
  for (const KfdMemBank& bank : self->mem_banks) {
    if (bank.width_bits <= 0 || bank.mem_clk_max_mhz <= 0) continue;
    if (gpu.info.memory_bus_width_bits == 0) gpu.info.memory_bus_width_bits = bank.width_bits;
    if (gpu.info.memory_clock_mhz == 0) gpu.info.memory_clock_mhz = bank.mem_clk_max_mhz;
    break;
  }
  if (gpu.info.copy_engines == 0) gpu.info.copy_engines = self->num_sdma_engines + self->num_sdma_xgmi_engines;
  return true;
}

}  // namespace commatlas
