// The wire witness of NVIDIA GPUs (core/wire.h): a movement's route from the node's links, and the
// GPUs' NVLink and PCIe traffic counters from NVML field values.
#include <algorithm>
#include <memory>
#include <mutex>

#include "core/wire.h"
#include "topology/nvml_library.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

bool judged_operation(Operation op) {
  return op == Operation::Copy || op == Operation::Read || op == Operation::Write || op == Operation::SendRecv ||
         op == Operation::PingPong;
}

std::string gpu_name(int gpu) { return "GPU " + std::to_string(gpu); }

const GpuInfo* find_gpu(const Topology& topo, int gpu) {
  for (const GpuInfo& g : topo.gpus)
    if (g.index == gpu) return &g;
  return nullptr;
}

class NvmlWireWitness final : public WireWitness {
 public:
  std::string source() const override {
    return "NVML field values: NVLink data TX/RX (KiB, payload only), PCIe TX/RX bytes, around an untimed pass";
  }

  WireRoute route(const Movement& m) const override {
    // Host-only runs never start GPU discovery (the CUDA runtime, NVML) just to learn there is none.
    static const Topology no_gpus;
    bool gpu = false;
    for (const std::optional<Endpoint>* e : {&m.from, &m.to, &m.by}) gpu = gpu || (*e && (*e)->memory == Memory::Gpu);
    return wire_route(m, gpu ? gpu_topology() : no_gpus);
  }

  std::optional<std::string> unavailable() const override {
#ifdef COMMATLAS_HIP
    return std::string("no link counters are read on AMD GPUs yet (NVML is NVIDIA's)");
#else
    const NvmlLibrary& nvml = library();
    if (!nvml.available()) return nvml.detail();
    return std::nullopt;
#endif
  }

  std::vector<GpuWire> read(const std::vector<int>& gpus) override {
    const Topology& topo = gpu_topology();
    std::vector<GpuWire> out;
    for (int gpu : gpus) {
      const GpuInfo* g = find_gpu(topo, gpu);
      if (!g) {
        GpuWire w;
        w.gpu = gpu;
        w.nvlink.why = w.pcie.why = gpu_name(gpu) + " is not in the topology";
        out.push_back(w);
        continue;
      }
      out.push_back(library().traffic(gpu, g->pci_bus_id));
    }
    return out;
  }

 private:
  // Loaded on first use: host-only runs never open NVML.
  const NvmlLibrary& library() const {
    std::call_once(once_, [this] { nvml_ = std::make_unique<NvmlLibrary>(); });
    return *nvml_;
  }
  mutable std::once_flag once_;
  mutable std::unique_ptr<NvmlLibrary> nvml_;
};

std::unique_ptr<WireWitness> make_witness() { return std::make_unique<NvmlWireWitness>(); }

const bool registered = set_wire_witness_factory(&make_witness);

}  // namespace

WireRoute wire_route(const Movement& m, const Topology& topo) {
  WireRoute r;
  if (!m.from || !m.to || !m.same_node) return r;
  if (!judged_operation(m.operation)) return r;
  if (m.direction != MoveDirection::Uni && m.direction != MoveDirection::Bi && m.direction != MoveDirection::HalfRoundTrip)
    return r;
  if (m.mechanism == Mechanism::CpuMemcpy || m.mechanism == Mechanism::MpiHost || m.mechanism == Mechanism::Harness)
    return r;

  std::vector<int> gpus;
  bool host_end = false, unknown_gpu = false;
  for (const std::optional<Endpoint>* e : {&m.from, &m.to, &m.by}) {
    if (!*e) continue;
    if ((*e)->memory == Memory::Host) host_end = true;
    if ((*e)->memory != Memory::Gpu) continue;
    if (!(*e)->gpu) {
      unknown_gpu = true;
      continue;
    }
    if (std::find(gpus.begin(), gpus.end(), *(*e)->gpu) == gpus.end()) gpus.push_back(*(*e)->gpu);
  }
  if (gpus.empty() && !unknown_gpu) return r;  // host memory only
  std::sort(gpus.begin(), gpus.end());
  r.applies = true;
  r.gpus = gpus;
  if (unknown_gpu) {
    r.not_judged = "a GPU of the movement is not known";
    return r;
  }
  for (int gpu : gpus)
    if (!find_gpu(topo, gpu)) {
      r.not_judged = gpu_name(gpu) + " is not in this node's topology" +
                     (topo.no_gpu_reason.empty() ? "" : " (" + topo.no_gpu_reason + ")");
      return r;
    }

  if (m.mechanism == Mechanism::MpiStaged) {
    // Out of one GPU over its PCIe into host memory, and from there into the other: each byte
    // leaves one GPU's PCIe counter and enters another's, as between GPUs.
    r.link = WireLink::Pcie;
    r.path = gpus.size() == 1 ? gpu_name(gpus[0]) + " -> host -> " + gpu_name(gpus[0]) + " over PCIe"
                              : gpu_name(gpus[0]) + " <-> host <-> " + gpu_name(gpus[1]) + " over PCIe";
    if (gpus.size() > 2) r.not_judged = "more than two GPUs on one staged path";
    return r;
  }
  if (host_end) {
    r.host_end = true;
    r.link = WireLink::Pcie;
    if (gpus.size() != 1) {
      r.path = "host memory and " + std::to_string(gpus.size()) + " GPUs";
      r.not_judged = "host memory and several GPUs on one path: the bytes per link are not declared";
      return r;
    }
    r.path = "host <-> " + gpu_name(gpus[0]) + " over PCIe";
    return r;
  }
  if (gpus.size() == 1) {  // within one GPU's memory: no link is crossed
    r.applies = false;
    return r;
  }
  if (gpus.size() > 2) {
    r.path = std::to_string(gpus.size()) + " GPUs";
    r.not_judged = "more than two GPUs on one path: the bytes per link are not declared";
    return r;
  }
  const GpuPair* pair = topo.pair(gpus[0], gpus[1]);
  const std::string between = gpu_name(gpus[0]) + " <-> " + gpu_name(gpus[1]);
  if (!pair || pair->link == "none") {
    r.path = between;
    r.not_judged = "the link between " + gpu_name(gpus[0]) + " and " + gpu_name(gpus[1]) + " is not known";
    return r;
  }
  if (pair->link == "nvlink") {
    r.link = WireLink::Nvlink;
    r.path = between + " over NVLink";
  } else if (pair->link == "pcie") {
    r.link = WireLink::Pcie;
    r.path = between + " over PCIe";
  } else {
    r.path = between + " over " + pair->link;
    r.not_judged = "no traffic counters are read for " + pair->link + " links";
  }
  return r;
}

}  // namespace commatlas
