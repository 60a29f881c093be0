// The node's network interfaces as Linux describes them (no library needed), which one is closest
// to each GPU, and what a path between two nodes can carry.
//
// InfiniBand and RoCE ports come from /sys/class/infiniband/*/ports/*/{rate,link_layer,state},
// Ethernet from /sys/class/net/*/speed, Slingshot (HPE Cassini, "cxi") from /sys/class/cxi with the
// speed of its hsn interface. Closeness is PCIe distance: the hops between the GPU's and the NIC's
// devices in the PCI tree (their sysfs paths), as nvidia-smi topo's PIX/PXB/PHB/SYS say it.
// Everything takes the sysfs root, so tests read recorded trees (engine/tests/fixtures/sysfs/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"  // Peak
#include "core/json.h"
#include "topology/topology.h"

namespace commatlas {

struct Nic {
  std::string name;         // "mlx5_0/1" (device/port), "eth0", "cxi0"
  std::string kind;         // "infiniband", "roce", "ethernet", "slingshot"
  std::string state;        // as sysfs says it: "ACTIVE", "up", "down", ...
  bool active = false;
  double rate_gbit = 0;     // signalling rate per direction, Gb/s; 0 unknown
  std::string rate_text;    // the sysfs text it came from: "200 Gb/sec (4X HDR)", "200000 Mb/s"
  std::string pci_address;  // "0000:3b:00.0"; empty for a virtual interface
  std::vector<std::string> pci_path;  // root complex first: {"pci0000:00", "0000:00:01.0", ...}
  int numa_node = -1;

  double gbps() const { return rate_gbit / 8; }  // GB/s per direction
};

struct GpuNic {
  int gpu = 0;
  std::string nic;  // Nic::name; empty when the node has no NIC
  int pcie_hops = -1;  // -1: the GPU's PCI path is unknown
};

struct NodeNics {
  std::vector<Nic> nics;
  std::vector<GpuNic> gpu_nics;
};

// Physical network interfaces under `sys_root` ("/sys"), sorted by name; virtual ones (lo, veth,
// bridges: no device) are left out, and an Ethernet interface of an RDMA device counts once.
std::vector<Nic> read_nics(const std::string& sys_root = "/sys");

// The PCI path of a device ("0000:3b:00.0") under sys_root; empty if unknown.
std::vector<std::string> pci_path_of(const std::string& sys_root, const std::string& pci_address);

// Hops between two PCI paths: up from one to their common bridge and down to the other; paths on
// different root complexes meet at the CPU (a root counts as one more hop). -1 if either is empty.
int pcie_hops(const std::vector<std::string>& a, const std::vector<std::string>& b);

// For each GPU, the active NIC with the fewest PCIe hops (faster first on a tie, then by name).
std::vector<GpuNic> closest_nics(const std::vector<GpuInfo>& gpus, const std::vector<Nic>& nics,
                                 const std::string& sys_root = "/sys");

// The NIC a rank uses: its GPU's closest, else (no GPU) the fastest active one; nullopt: none.
std::optional<Nic> nic_for_rank(const std::vector<Nic>& nics, const std::vector<GpuNic>& gpu_nics, std::optional<int> gpu);

// The peak of a path between two nodes: the slower NIC of its two ends, with where it came from.
// Unknown (nullopt, with why in `why`) when an end has no NIC or its NIC reports no rate.
std::optional<Peak> internode_peak(const std::optional<Nic>& a, const std::string& node_a, const std::optional<Nic>& b,
                                   const std::string& node_b, std::string* why = nullptr);

// One rank's NIC as one line, so rank 0 can gather every rank's (Group::gather_strings).
std::string encode_nic(const std::optional<Nic>& nic);
std::optional<Nic> decode_nic(const std::string& text);

// "nics": [...], "gpu_nics": [...] into a topology object being written.
void write_nics_json(const NodeNics& nics, JsonWriter& out);

class NodeFacts;
// The node's facts (core/node_facts.h) answered from this node's topology and NICs.
const NodeFacts& topology_node_facts();

// This node's NICs and the GPU each serves, read once.
const NodeNics& node_nics();

}  // namespace commatlas
