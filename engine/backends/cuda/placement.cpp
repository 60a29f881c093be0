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

::commatlas::Endpoint place_of(Location l, int gpu, bool touched_by_gpu) {
  const Endpoint e = endpoint_of(l, gpu);
  switch (l) {
    case Location::Local:
    case Location::Peer: return gpu_memory(e.gpu, e.alloc, e.first_touch);
    case Location::Managed:
    case Location::ManagedPrefetched:
      if (touched_by_gpu) return gpu_memory(gpu, e.alloc, e.first_touch);
      return host_memory(std::nullopt, e.alloc, e.first_touch);
    default: return host_memory(std::nullopt, e.alloc, e.first_touch);
  }
}

std::string managed_hint_of(Location l) {
  switch (l) {
    case Location::Managed: return "none";
    case Location::ManagedPrefetched: return "prefetched";
    case Location::ManagedHostPreferred: return kHostPreferred;
    default: return "";
  }
}

void keep_managed_hint(Movement& m, Location l) {
  const std::string hint = managed_hint_of(l);
  if (!hint.empty()) m.choices.set("managed_hint", hint);
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

}  // namespace commatlas::gpu
