// What the CUDA runtime, NVML and sysfs answered, kept as plain values.
//
// Discovery only asks; build_topology() alone decides what the answers mean (which GPU a link
// reaches, what a pair can carry). So every decision is tested from recorded answers of real
// nodes, on a machine without a GPU.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace commatlas {

// What the far end of an NVLink is: another GPU, or an NVSwitch that reaches every GPU.
enum class LinkRemote { Gpu, Switch };

struct NvlinkAnswer {  // one active link
  std::string remote_bus_id;  // canonical form, see canonical_bus_id()
  LinkRemote remote = LinkRemote::Gpu;
};

// One xGMI link set from a GPU to another (AMD; from the KFD topology, see kfd.h).
struct XgmiAnswer {
  std::string remote_bus_id;  // canonical form
  int links = 0;              // 0: no direct link (routed through another GPU)
  double link_gbps = 0;       // per link, per direction; 0 when the model's rate is unknown
  double peak_gbps = 0;       // per direction
  std::string source;         // how peak_gbps was reached
};

struct GpuAnswers {
  // CUDA runtime and sysfs facts; hbm_peak_gbps and pcie.peak_gbps are left for build_topology.
  GpuInfo info;
  int compute_major = 0, compute_minor = 0;
  bool nvml_answered = false;  // NVML knew this GPU (by PCI bus id)
  std::vector<NvlinkAnswer> nvlinks;
  int nvml_nvlink_version = 0;    // nvmlDeviceGetNvLinkVersion of the first active link
  double nvlink_speed_gbps = 0;   // per link per direction from NVML field values; 0: none given
  std::vector<XgmiAnswer> xgmi;   // AMD: links to other GPUs from the KFD topology
};

struct PeerAnswer {
  int src = 0, dst = 0;
  bool can_access = false;     // cudaDeviceCanAccessPeer
  bool native_atomics = false; // cudaDevP2PAttrNativeAtomicSupported
};

struct TopologyAnswers {
  std::vector<GpuAnswers> gpus;
  std::vector<PeerAnswer> peers;
  bool nvml_available = false;
  std::string nvml_detail;
  std::string no_gpu_reason;
  bool kfd_available = false;  // AMD: links came from the KFD topology in sysfs
};

Topology build_topology(const TopologyAnswers& answers);

// "00000000:3B:00.0" (NVML), "0000:3B:00.0" (CUDA) -> "0000:3b:00.0" (sysfs); "" if unparsable.
std::string canonical_bus_id(const std::string& bus_id);

// NVLink generation of a GPU: from its architecture where known (NVML's version numbers have
// changed meaning between drivers), else from NVML's nvmlNvlinkVersion_t; 0 when unknown.
int nvlink_generation(int compute_major, int compute_minor, int nvml_version);
// Per link, per direction, from the published signalling rate; 0 when unknown.
double nvlink_table_gbps(int generation);

}  // namespace commatlas
