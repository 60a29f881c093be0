#include "topology/topology.h"

namespace commatlas {

std::optional<Peak> peak_first_gpu_pair(int directions) {
  const Topology& topo = gpu_topology();
  if (topo.gpus.size() < 2) return std::nullopt;
  std::optional<Peak> p = peak_peer(topo, 0, 1);
  if (p && directions > 1) {
    p->gbps *= directions;
    p->source += ", both directions";
  }
  return p;
}

}  // namespace commatlas
