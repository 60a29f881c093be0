#include "backends/cuda/placement.h"

#include "backends/cuda/gpu_access.h"

namespace commatlas::cuda {
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

BufferSpec buffer_of(Location l, int gpu) {
  switch (l) {
    case Location::Local: return {Allocator::Device, gpu, "gpu", ""};
    case Location::Peer: return {Allocator::Device, peer_of(gpu), "gpu", ""};
    case Location::Pinned: return {Allocator::Pinned, gpu, "cpu", ""};
    case Location::Pageable: return {Allocator::Pageable, gpu, "cpu", ""};
    default: return {Allocator::Managed, gpu, "cpu", ""};
  }
}

Endpoint place_of(Location l, int gpu, bool touched_by_gpu) {
  const BufferSpec b = buffer_of(l, gpu);
  switch (l) {
    case Location::Local:
    case Location::Peer: return gpu_memory(b.gpu, b.allocator, b.first_touch);
    case Location::Managed:
    case Location::ManagedPrefetched:
      if (touched_by_gpu) return gpu_memory(gpu, b.allocator, b.first_touch);
      return host_memory(std::nullopt, b.allocator, b.first_touch);
    default: return host_memory(std::nullopt, b.allocator, b.first_touch);
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
  const BufferSpec b = buffer_of(l, gpu);
  Params p{{"allocator", to_string(b.allocator)}, {"first_touch", b.first_touch}};
  const std::string hint = managed_hint_of(l);
  if (!hint.empty()) p.set("managed_hint", hint);
  p.set("gpu", std::int64_t{gpu});
  p.set("memory_gpu", std::int64_t{b.gpu});
  return p;
}

Location location_from(const Params& p) {
  const Allocator allocator = parse_allocator(p.text("allocator"));
  const std::string hint = p.has("managed_hint") ? p.text("managed_hint") : "";
  const int gpu = static_cast<int>(p.integer("gpu"));
  const int memory_gpu = static_cast<int>(p.integer("memory_gpu"));
  for (Location l : kAll) {
    const BufferSpec b = buffer_of(l, gpu);
    if (b.allocator == allocator && b.gpu == memory_gpu && managed_hint_of(l) == hint) return l;
  }
  throw UsageError("no direct-access location is " + to_string(allocator) + " memory of GPU " +
                   std::to_string(memory_gpu) + " for GPU " + std::to_string(gpu) +
                   (hint.empty() ? "" : " with managed hint '" + hint + "'"));
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

}  // namespace commatlas::cuda
