// Which pointers MPI may be handed for a GPU-buffer benchmark: the rule that keeps a library
// without CUDA support (Open MPI 4.1.6 on the GPU machines crashes on device pointers) from
// ever seeing one. Pure: unit-tested without MPI, CUDA or a GPU (engine/tests/gpu_aware_policy_mpi.cpp).
#pragma once

#include <optional>
#include <string>

#include "backends/mpi/gpu_support.h"

namespace commatlas::mpi {

// How a GPU benchmark's message reaches MPI.
enum class GpuMessagePath {
  Staged,  // copied to a pinned host buffer before the send and back after the receive (D2H, MPI, H2D)
  Direct,  // the buffer itself is handed to MPI ("GPU-aware")
};

// Where the allocator puts the memory: host allocators (pinned, registered, pageable) give host
// pointers any MPI can use; device and managed allocators give pointers only a CUDA-aware MPI may touch.
enum class AllocatorMemory { Host, Gpu };

// What MPI would be handed.
enum class MpiPointer { Host, Device };

inline MpiPointer pointer_handed_to_mpi(GpuMessagePath path, AllocatorMemory memory) {
  return path == GpuMessagePath::Direct && memory == AllocatorMemory::Gpu ? MpiPointer::Device : MpiPointer::Host;
}

// Why this combination must not run with this library (the Skip reason), or nullopt.
inline std::optional<std::string> gpu_pointer_refusal(GpuMessagePath path, AllocatorMemory memory,
                                                      const CudaSupportVerdict& verdict) {
  if (pointer_handed_to_mpi(path, memory) == MpiPointer::Host || verdict.supported()) return std::nullopt;
  return "GPU-aware MPI refused: device pointers are passed only to a " + verdict.runtime + "-aware MPI library, and " +
         verdict.reason;
}

}  // namespace commatlas::mpi
