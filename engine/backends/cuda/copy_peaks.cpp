#include "backends/cuda/copy_peaks.h"

#include "backends/cuda/gpu_access.h"
#include "topology/topology.h"

namespace commatlas::gpu {

std::optional<Peak> copy_peak(const CopySpec& spec) {
  const Topology& topo = gpu_topology();
  const bool bi = spec.direction == Direction::Bi;
  switch (spec.path) {
    case Path::H2D:
    case Path::D2H: {
      const int gpu = spec.path == Path::H2D ? spec.dst_gpu : spec.src_gpu;
      // GPU-touched managed pages never cross the host link: the copy stays in HBM.
      if (resident_on_gpu(host_endpoint(spec))) return peak_device_memory(topo, gpu);
      auto p = peak_host_link(topo, gpu);
      return bi ? scaled(p, 2, "both directions") : p;
    }
    case Path::D2D: return peak_device_memory(topo, spec.src_gpu);
    case Path::Peer: {
      auto p = peak_peer(topo, spec.src_gpu, spec.dst_gpu);
      return bi ? summed(p, peak_peer(topo, spec.dst_gpu, spec.src_gpu)) : p;
    }
  }
  return std::nullopt;
}

std::optional<Peak> fanout_peak(const std::vector<Leg>& legs, Fan fan) {
  const Topology& topo = gpu_topology();
  std::optional<Peak> best;
  for (const Leg& leg : legs) {
    auto p = peak_peer(topo, leg.src.gpu, leg.dst.gpu);
    if (p && (!best || p->gbps > best->gbps)) best = p;
  }
  if (best)
    best->source += fan == Fan::OneToAll ? " (the root's outgoing link, shared by all receivers)"
                                         : " (the root's incoming link, shared by all senders)";
  return best;
}

std::optional<Peak> link_peak(Link link, int gpu, int other_gpu, int directions) {
  const Topology& topo = gpu_topology();
  std::optional<Peak> p;
  switch (link) {
    case Link::DeviceMemory: return peak_device_memory(topo, gpu);  // already read + write together
    case Link::HostLink: p = peak_host_link(topo, gpu); break;
    case Link::Peer:
      p = peak_peer(topo, gpu, other_gpu);
      if (directions == 2) return summed(p, peak_peer(topo, other_gpu, gpu));
      return p;
  }
  return directions == 2 ? scaled(p, 2, "reads in, writes out") : p;
}

}  // namespace commatlas::gpu
