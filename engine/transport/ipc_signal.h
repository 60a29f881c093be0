// GPU-side signalling between processes for the CUDA IPC transport: a counter in the
// receiver's memory that the sender's GPU bumps after its copy, and a kernel that spins until it
// gets there. The whole ping-pong then runs GPU to GPU, with the hosts only enqueueing.
#pragma once

#include <cstdint>

#include "backends/cuda/gpu_runtime.h"

namespace commatlas {

// Writes `value` to *flag (a peer's memory, mapped through IPC) after every earlier write of
// the stream is visible system-wide.
void enqueue_signal(std::uint64_t* flag, std::uint64_t value, cudaStream_t stream);

// Spins until *flag >= value. Gives up after a timeout and records that in *timed_out (a host-
// mapped int), so a peer that died cannot wedge this GPU for ever; the host checks it after.
void enqueue_wait(const std::uint64_t* flag, std::uint64_t value, int* timed_out, cudaStream_t stream);

// How long a wait kernel spins before it gives up.
inline constexpr std::uint64_t kSignalTimeoutNs = 10ull * 1000 * 1000 * 1000;

}  // namespace commatlas
