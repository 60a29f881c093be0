// MPI message buffers in GPU-allocated memory (the GPU kinds of message_buffers.h), so the MPI
// protocols (ping-pong, windows, collectives) run unchanged over them:
//   Staged: the message lives in `allocator` memory on the rank's GPU and MPI sees pinned host
//           copies; the timed operation includes the D2H before each send and the H2D after each
//           receive (cudaMemcpyAsync + stream synchronise: the "trivial staging" baseline).
//   Direct: MPI is handed the allocator's pointer itself. Callers must have cleared the pointer
//           with gpu_pointer_refusal() first.
#pragma once

#include "backends/cuda/memory.h"
#include "backends/mpi/gpu_pointer_policy.h"
#include "backends/mpi/message_buffers.h"
#include "core/benchmark.h"
#include "core/group.h"

namespace commatlas {

AllocatorMemory allocator_memory(MemoryKind kind);

MessageBufferMaker gpu_message_buffers(GpuMessagePath path, MemoryKind allocator, int device);

// The GPU of this rank: one rank per GPU, in local-rank order.
int rank_gpu(const Group& group);

// Where a message buffer of `allocator` on `gpu` is while timed: host allocators in host memory,
// device and managed (first touched by the GPU's copy) in the GPU's memory.
Endpoint message_place(MemoryKind allocator, std::optional<int> gpu);

}  // namespace commatlas
