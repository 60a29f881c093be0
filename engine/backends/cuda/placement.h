// Where a direct-access array lives, seen from the GPU that runs the kernel, and how managed
// pages are steered there. Shared by the STREAM kernels and the pointer chase.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/copy_buffers.h"
#include "backends/cuda/copy_plan.h"

namespace commatlas::cuda {

enum class Location {
  Local,                 // cudaMalloc on the running GPU
  Peer,                  // cudaMalloc on the next GPU, peer access enabled
  Pinned,                // cudaHostAlloc mapped, CPU-touched
  Managed,               // cudaMallocManaged, CPU-touched, no hint: pages migrate on GPU faults
  ManagedPrefetched,     // ... then cudaMemPrefetchAsync to the running GPU
  ManagedHostPreferred,  // ... advise preferred location = host, accessed by the running GPU
  Pageable,              // malloc: only where cudaDevAttrPageableMemoryAccess says the GPU can
};

// Every location, peer only when there is a second GPU.
std::vector<Location> locations(int gpus, bool with_managed_hints);

// A location in a variant's params, in the record's words: `allocator` and `first_touch` of the
// array, `managed_hint` (managed memory only), `gpu` (the one whose kernel runs) and `memory_gpu`
// (whose memory the array is: `gpu` itself, or its peer). No word of its own: the record's
// endpoint and choices say the same.
Params location_params(Location l, int gpu);
// The location those params name; throws UsageError for a combination that is none.
Location location_from(const Params& p);

// The buffer that holds a location's array for a kernel running on `gpu`.
BufferSpec buffer_of(Location l, int gpu);
// The GPU that owns peer memory for `gpu`.
inline int peer_of(int gpu) { return gpu == 0 ? 1 : 0; }

// Where a location's bytes are while timed. Managed pages follow whoever touches them: a GPU
// kernel (or the prefetch) moves CPU-touched pages into the GPU's memory, a CPU chase faults them
// back to the host; host-preferred advice keeps them on the host.
Endpoint place_of(Location l, int gpu, bool touched_by_gpu);
// The managed-memory advice a location applies ("none", "prefetched", "preferred_location_host"),
// or "" for non-managed locations.
std::string managed_hint_of(Location l);

// Applies the location's managed-memory hint or prefetch (a no-op for the others); after the
// buffer has been filled, so the CPU first touch is what the hint then moves or keeps.
void place(const PlacedBuffer& buffer, Location l, int gpu);

}  // namespace commatlas::cuda
