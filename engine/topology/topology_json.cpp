// The topology as JSON: the shape the Python CLI (`commatlas topo`) and the report read.
#include "topology/topology.h"

#include "topology/nics.h"

namespace commatlas {
namespace {

void write_gpu(const GpuInfo& g, JsonWriter& out) {
  out.begin_object();
  out.field("index", g.index).field("name", g.name).field("pci_bus_id", g.pci_bus_id);
  out.field("sm_count", g.sm_count).field("memory_bytes", g.memory_bytes);
  out.field("memory_clock_mhz", g.memory_clock_mhz).field("memory_bus_width_bits", g.memory_bus_width_bits);
  out.field("hbm_peak_gbps", g.hbm_peak_gbps).field("copy_engines", g.copy_engines);
  out.field("l2_cache_bytes", g.l2_cache_bytes);
  out.field("numa_node", g.numa_node).field("cpu_affinity", g.cpu_affinity);
  out.field("pageable_memory_access", g.pageable_memory_access);
  out.field("concurrent_managed_access", g.concurrent_managed_access);
  out.key("pcie").begin_object();
  out.field("gen_current", g.pcie.gen_current).field("gen_max", g.pcie.gen_max);
  out.field("width_current", g.pcie.width_current).field("width_max", g.pcie.width_max);
  out.field("peak_gbps", g.pcie.peak_gbps);
  out.end_object();
  out.end_object();
}

void write_pair(const GpuPair& p, JsonWriter& out) {
  out.begin_object();
  out.field("src", p.src).field("dst", p.dst);
  out.field("peer_access", p.peer_access).field("peer_atomics", p.peer_atomics);
  out.field("link", p.link).field("nvlink_links", p.nvlink_links);
  out.field("nvlink_link_gbps", p.nvlink_link_gbps);
  // AMD pairs only, so NVIDIA nodes' topology stays as it was recorded.
  if (p.link == "xgmi") out.field("xgmi_links", p.xgmi_links).field("xgmi_link_gbps", p.xgmi_link_gbps);
  out.field("peak_gbps", p.peak_gbps);
  out.end_object();
}

}  // namespace

void write_topology_json(const Topology& topo, JsonWriter& out, const NodeNics* nics) {
  out.begin_object();
  out.key("gpus").begin_array();
  for (const GpuInfo& g : topo.gpus) write_gpu(g, out);
  out.end_array();
  out.key("pairs").begin_array();
  for (const GpuPair& p : topo.pairs) write_pair(p, out);
  out.end_array();
  if (nics) write_nics_json(*nics, out);
  out.key("nvml").begin_object();
  out.field("available", topo.nvml_available).field("detail", topo.nvml_detail);
  // The CLI's legend reads the detail under these names.
  out.field(topo.nvml_available ? "version" : "reason", topo.nvml_detail);
  out.end_object();
  out.field("source", topo.source);
  if (topo.gpus.empty()) out.field("reason", topo.no_gpu_reason);
  out.end_object();
}

}  // namespace commatlas
