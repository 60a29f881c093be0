// MPI message buffers in GPU-allocated memory (the GPU kinds of message_buffers.h), so the MPI
// protocols (ping-pong, windows, collectives) run unchanged over them:
//   Staged: the message lives in `allocator` memory on the rank's GPU and MPI sees pinned host
//           copies; the timed operation includes the D2H before each send and the H2D after each
//           receive (cudaMemcpyAsync + stream synchronise: the "trivial staging" baseline).
//   Direct: MPI is handed the allocator's pointer itself. Callers must have cleared the pointer
//           with gpu_pointer_refusal() first.
#pragma once

#include <cstddef>
#include <string>

#include "backends/cuda/memory.h"
#include "backends/mpi/gpu_pointer_policy.h"
#include "backends/mpi/message_buffers.h"
#include "core/benchmark.h"
#include "core/group.h"

namespace commatlas::mpi {

AllocatorMemory allocator_memory(cuda::MemoryKind kind);

MessageBufferMaker gpu_message_buffers(GpuMessagePath path, cuda::MemoryKind allocator, int device);

// The GPU of this rank: one rank per GPU, in local-rank order.
int rank_gpu(const Group& group);

// Makes rank_gpu() this rank's current device for the whole job, as an MPI + CUDA application
// does first thing: GPU-aware MPI libraries take the current device as the rank's GPU. Without it
// the device was whatever an earlier benchmark left current, and Open MPI's smcuda announced
// GPU 0 for both ranks of a 2-GPU job: device-buffer messages then crawled at 2.4 GB/s (146 ms
// per window of 64 8-byte messages) until an IPC benchmark happened to set the device. Returns
// the device it made current, or -1 with no GPU.
int bind_rank_to_gpu(const Group& group);

// What bind_rank_to_gpu has the rank's GPU write before the job's first benchmark. NCCL's
// latency-bound collectives (8 B - 64 KiB) read 1-4% slower once the process's GPU had written
// device memory before they made their buffers, and a fresh job that ran them first read them
// faster than the full run, which runs them after the GPU-aware MPI and CUDA IPC benchmarks.
// Memory only allocated, even kept, cost nothing; 16 writes of 32 MiB cost as much as 8 GiB kept
// (results/nvidia-h100-x2/figures-that-hold-13, -14). So every rank starts from the state a
// process reaches once its GPU has written memory, as any application's has, not from a fresh
// one that only a benchmark run alone sees.
struct RankGpuWrites {
  std::size_t bytes;  // one buffer, allocated, written by cudaMemset and freed, `passes` times
  int passes;
  std::string why;    // a sentence for the record, with these numbers
};
RankGpuWrites rank_gpu_writes();

// Where a message buffer of `allocator` on `gpu` is while timed: host allocators in host memory,
// device and managed (first touched by the GPU's copy) in the GPU's memory.
Endpoint message_place(cuda::MemoryKind allocator, std::optional<int> gpu);

// The variants of a GPU message path's benchmarks (mpi.staged.*, mpi.gpu_aware.*) only `--full`
// measures, for its point-to-point bibw or its other operations (docs/tiers.md).
std::vector<TierRule> gpu_message_tier_rules(GpuMessagePath path, bool bibw);

}  // namespace commatlas::mpi
