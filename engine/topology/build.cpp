// From answers to a Topology: which GPU every link reaches, and what every pair can carry.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "topology/answers.h"

namespace commatlas {
namespace {

struct LinkCounts {
  std::map<std::string, int> to_gpu;  // by remote bus id
  int to_switch = 0;
};

LinkCounts count_links(const GpuAnswers& gpu) {
  LinkCounts c;
  for (const NvlinkAnswer& link : gpu.nvlinks) {
    if (link.remote == LinkRemote::Switch) ++c.to_switch;
    else ++c.to_gpu[link.remote_bus_id];
  }
  return c;
}

// Per-link rate of a GPU, and where it came from.
struct LinkRate {
  double gbps = 0;
  int generation = 0;
  std::string source;
};

LinkRate link_rate(const GpuAnswers& gpu) {
  LinkRate r;
  r.generation = nvlink_generation(gpu.compute_major, gpu.compute_minor, gpu.nvml_nvlink_version);
  if (gpu.nvlink_speed_gbps > 0) {
    r.gbps = gpu.nvlink_speed_gbps;
    r.source = "NVML";
  } else {
    r.gbps = nvlink_table_gbps(r.generation);
    r.source = "table";
  }
  return r;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void link_pair(GpuPair& pair, const GpuAnswers& src, const GpuAnswers& dst) {
  for (const XgmiAnswer& x : src.xgmi) {
    if (x.remote_bus_id != dst.info.pci_bus_id) continue;
    pair.link = "xgmi";
    pair.xgmi_links = x.links;
    pair.xgmi_link_gbps = x.link_gbps;
    pair.peak_gbps = x.peak_gbps;
    pair.peak_source = x.source;
    return;
  }
  const LinkCounts from = count_links(src), to = count_links(dst);
  const auto direct = from.to_gpu.find(dst.info.pci_bus_id);
  const int direct_links = direct == from.to_gpu.end() ? 0 : direct->second;
  // Through NVSwitch every link of a GPU reaches every other GPU; the narrower end limits.
  const int switched_links = std::min(from.to_switch, to.to_switch);
  pair.nvlink_links = direct_links + switched_links;

  if (pair.nvlink_links > 0) {
    const LinkRate a = link_rate(src), b = link_rate(dst);
    const LinkRate& slower = a.gbps <= b.gbps ? a : b;
    pair.link = "nvlink";
    pair.nvlink_link_gbps = slower.gbps;
    pair.peak_gbps = pair.nvlink_links * slower.gbps;
    pair.peak_source = "NVLink" + (slower.generation > 0 ? std::to_string(slower.generation) : std::string("?")) +
                       ": " + std::to_string(pair.nvlink_links) + " links x " + number(slower.gbps) + " GB/s (" +
                       slower.source + (switched_links > 0 ? ", through NVSwitch" : "") + ")";
    return;
  }
  if (pair.peer_access) {
    // No NVLink: peer traffic crosses the PCIe hierarchy, at best at the slower GPU's link rate.
    pair.link = "pcie";
    const PcieLink& slower = src.info.pcie.peak_gbps <= dst.info.pcie.peak_gbps ? src.info.pcie : dst.info.pcie;
    if (slower.peak_gbps > 0) {
      pair.peak_gbps = slower.peak_gbps;
      pair.peak_source = "PCIe Gen" + std::to_string(slower.gen_max) + " x" + std::to_string(slower.width_max) +
                         " of the slower GPU (" + slower.source + ")";
    }
  }
}

}  // namespace

std::string canonical_bus_id(const std::string& bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

const GpuPair* Topology::pair(int src, int dst) const {
  for (const GpuPair& p : pairs)
    if (p.src == src && p.dst == dst) return &p;
  return nullptr;
}

Topology build_topology(const TopologyAnswers& answers) {
  Topology topo;
  topo.nvml_available = answers.nvml_available;
  topo.nvml_detail = answers.nvml_detail;
  topo.source = answers.kfd_available ? "kfd" : answers.nvml_available ? "nvml" : "cuda_runtime";
  topo.no_gpu_reason = answers.no_gpu_reason;
  if (answers.gpus.empty() && topo.no_gpu_reason.empty()) topo.no_gpu_reason = "no GPU found";

  for (const GpuAnswers& a : answers.gpus) {
    GpuInfo g = a.info;
    g.hbm_peak_gbps = hbm_gbps(g.memory_clock_mhz, g.memory_bus_width_bits);
    g.pcie.peak_gbps = pcie_gbps_per_direction(g.pcie.gen_max, g.pcie.width_max);
    topo.gpus.push_back(g);
  }
  // Link arithmetic reads the PCIe peaks computed above.
  std::vector<GpuAnswers> gpus = answers.gpus;
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].info = topo.gpus[i];

  for (const PeerAnswer& peer : answers.peers) {
    if (peer.src == peer.dst || peer.src < 0 || peer.dst < 0 || peer.src >= static_cast<int>(gpus.size()) ||
        peer.dst >= static_cast<int>(gpus.size()))
      continue;
    GpuPair pair;
    pair.src = peer.src;
    pair.dst = peer.dst;
    pair.peer_access = peer.can_access;
    pair.peer_atomics = peer.native_atomics;
    link_pair(pair, gpus[peer.src], gpus[peer.dst]);
    topo.pairs.push_back(pair);
  }
  return topo;
}

}  // namespace commatlas
