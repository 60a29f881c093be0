#include "backends/cuda/placement.h"

#include "backends/cuda/gpu_access.h"

namespace commatlas::gpu {
namespace {
const Location kAll[] = {Location::Local,   Location::Peer,
                         Location::Pinned,  Location::Managed,
                         Location::ManagedPrefetched, Location::ManagedHostPreferred,
                         Location::Pageable};
}

std::string to_string(Location l) {
  switch (l) {
    case Location::Local: return "local";
    case Location::Peer: return "peer";
    case Location::Pinned: return "pinned";
    case Location::Managed: return "managed";
    case Location::ManagedPrefetched: return "managed_prefetched";
    case Location::ManagedHostPreferred: return "managed_host_preferred";
    case Location::Pageable: return "pageable";
  }
  return "?";
}

Location location_from_string(const std::string& text) {
  for (Location l : kAll)
    if (to_string(l) == text) return l;
  throw UsageError("unknown location '" + text + "'");
}

std::vector<Location> locations(int gpus, bool with_managed_hints) {
  std::vector<Location> out;
  for (Location l : kAll) {
    if (l == Location::Peer && gpus < 2) continue;
    if (!with_managed_hints && (l == Location::ManagedPrefetched || l == Location::ManagedHostPreferred)) continue;
    out.push_back(l);
  }
  return out;
}

Endpoint endpoint_of(Location l, int gpu) {
  switch (l) {
    case Location::Local: return {"device", gpu, "gpu", ""};
    case Location::Peer: return {"device", peer_of(gpu), "gpu", ""};
    case Location::Pinned: return {"pinned", gpu, "cpu", ""};
    case Location::Pageable: return {"pageable", gpu, "cpu", ""};
    default: return {"managed", gpu, "cpu", ""};
  }
}

void place(const PlacedBuffer& buffer, Location l, int gpu) {
  if (l != Location::ManagedPrefetched && l != Location::ManagedHostPreferred) return;
  int concurrent = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, gpu));
  if (!concurrent)
    throw Skip("GPU " + std::to_string(gpu) + " takes no managed-memory hints (cudaDevAttrConcurrentManagedAccess = 0)");
  if (l == Location::ManagedHostPreferred) {
    advise_host_preferred(buffer.pointer(), buffer.bytes(), gpu);
    return;
  }
  Stream s(gpu);
  COMMATLAS_GPU_CHECK(cudaMemPrefetchAsync(buffer.pointer(), buffer.bytes(), gpu_location(gpu), 0, s.get()));
  s.synchronize();
}

std::optional<Peak> location_peak(Location l, int gpu, int directions) {
  switch (l) {
    case Location::Local:
    case Location::Managed:  // pages have migrated to the GPU by the time the timed loop starts
    case Location::ManagedPrefetched: return link_peak(Link::DeviceMemory, gpu, gpu, directions);
    case Location::Peer: return link_peak(Link::Peer, gpu, peer_of(gpu), directions);
    default: return link_peak(Link::HostLink, gpu, gpu, directions);
  }
}

}  // namespace commatlas::gpu
