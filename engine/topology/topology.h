// The node's GPUs, how they are linked, and the theoretical peak of every path.
//
// Discovery (topology_cuda.cu, nvml.cpp) fills plain values; the arithmetic that turns link
// facts into peaks (peaks.cpp) is pure, so it is tested from recorded answers without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"  // Peak
#include "core/json.h"
#include "core/node_facts.h"  // PeakAnswer
#include "core/wire.h"
#include "topology/host_memory.h"

namespace commatlas {

struct PcieLink {
  int gen_current = 0, gen_max = 0;
  int width_current = 0, width_max = 0;
  double peak_gbps = 0;  // per direction, at max generation and width (idle links train down)
  std::string source;    // where generation and width came from: "NVML", "sysfs", "" unknown
};

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  double hbm_peak_gbps = 0;  // 2 (DDR) x clock x bus width / 8
  int copy_engines = 0;      // async engines (cudaDevAttrAsyncEngineCount)
  std::uint64_t l2_cache_bytes = 0;  // cudaDevAttrL2CacheSize; a figure whose working set fits it is a cache figure
  int numa_node = -1;        // -1: unknown
  std::string cpu_affinity;  // "0-63"
  PcieLink pcie;
  bool pageable_memory_access = false;  // cudaDevAttrPageableMemoryAccess
  bool concurrent_managed_access = false;
};

struct GpuPair {
  int src = 0, dst = 0;
  bool peer_access = false;
  bool peer_atomics = false;
  std::string link = "none";  // "nvlink", "xgmi", "pcie", "none"
  int nvlink_links = 0;
  double nvlink_link_gbps = 0;  // per link, per direction
  int xgmi_links = 0;           // AMD Infinity Fabric (xGMI), from the KFD topology
  double xgmi_link_gbps = 0;    // per link, per direction; 0 when the model's rate is unknown
  double peak_gbps = 0;         // per direction
  std::string peak_source;      // how peak_gbps was reached, for Peak::source
};

struct Topology {
  std::vector<GpuInfo> gpus;
  std::vector<GpuPair> pairs;  // every ordered pair src != dst
  bool nvml_available = false;
  std::string nvml_detail;     // NVML version, or why it is unavailable
  std::string source;          // "nvml", "kfd" (AMD) or "cuda_runtime"
  std::string no_gpu_reason;   // set when gpus is empty

  const GpuPair* pair(int src, int dst) const;
};

// Discovered once per process (thread-safe); never throws: an empty topology says why.
const Topology& gpu_topology();

struct NodeNics;  // topology/nics.h
// With `nics`, the node's NICs and each GPU's closest NIC are written too.
void write_topology_json(const Topology& topo, JsonWriter& out, const NodeNics* nics = nullptr);

// Theoretical peaks of the paths benchmarks use (nullopt when the topology does not know).
std::optional<Peak> peak_host_link(const Topology& topo, int gpu);         // PCIe, one direction
std::optional<Peak> peak_device_memory(const Topology& topo, int gpu);     // HBM, read + write together
std::optional<Peak> peak_peer(const Topology& topo, int src, int dst);     // NVLink or PCIe, one direction

// The peak of a movement (and whether its working set is cache-resident), the one place records
// get their peak from: HBM within a GPU, PCIe between host and GPU, the NVLink/PCIe pair between
// GPUs (both directions summed for `bi`), the link for a collective's busbw, and why there is none
// (host memory, host-buffer MPI, between nodes, a cache-resident working set). `bytes` is the
// point's size; `cpu_cache_bytes` the CPU's last-level cache (HostFacts); `host_memory` the
// host's DRAM peak, or why it is not known (host_memory.h).
PeakAnswer peak_of(const Movement& movement, std::uint64_t bytes, const Topology& topo, std::uint64_t cpu_cache_bytes,
                   const HostMemoryPeak& host_memory = HostMemoryPeak{});
// peak_of on this node: its GPU topology (not asked for host-only movements) and DRAM peak. The
// node's facts (node_facts.cpp) start from it.
PeakAnswer movement_peak(const Movement& movement, std::uint64_t bytes, std::uint64_t cpu_cache_bytes);

// Which GPU link a movement's bytes cross, and so which traffic counters must see them
// (core/wire.h): PCIe between host memory and a GPU (or for host-staged MPI), the pair's NVLink or
// PCIe between two GPUs. Not applicable where no link is crossed or the bytes per link are not
// declared (latencies, collectives, fan-outs, between nodes).
WireRoute wire_route(const Movement& movement, const Topology& topo);

// Link arithmetic, exposed for tests.
double pcie_gbps_per_direction(int generation, int width);  // after encoding (8b/10b, 128b/130b)
double hbm_gbps(int memory_clock_mhz, int bus_width_bits);

}  // namespace commatlas
