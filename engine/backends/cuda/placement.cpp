#include "backends/cuda/placement.h"

#include "backends/cuda/gpu_access.h"

namespace commatlas::gpu {
namespace {
const Location kAll[] = {Location::Local,   Location::Peer,
                         Location::Pinned,  Location::Managed,
                         Location::ManagedPrefetched, Location::ManagedHostPreferred,
                         Location::Pageable};
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

Params location_params(Location l, int gpu) {
  const Endpoint e = endpoint_of(l, gpu);
  Params p{{"allocator", e.alloc}, {"first_touch", e.first_touch}};
  const std::string hint = managed_hint_of(l);
  if (!hint.empty()) p.set("managed_hint", hint);
  p.set("gpu", std::int64_t{gpu});
  p.set("memory_gpu", std::int64_t{e.gpu});
  return p;
}

Location location_from(const Params& p) {
  const std::string allocator = p.text("allocator");
  const std::string hint = p.has("managed_hint") ? p.text("managed_hint") : "";
  const int gpu = static_cast<int>(p.integer("gpu"));
  const int memory_gpu = static_cast<int>(p.integer("memory_gpu"));
  for (Location l : kAll) {
    const Endpoint e = endpoint_of(l, gpu);
    if (e.alloc == allocator && e.gpu == memory_gpu && managed_hint_of(l) == hint) return l;
  }
  throw UsageError("no direct-access location is " + allocator + " memory of GPU " + std::to_string(memory_gpu) +
                   " for GPU " + std::to_string(gpu) + (hint.empty() ? "" : " with managed hint '" + hint + "'"));
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
