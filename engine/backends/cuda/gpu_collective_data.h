// The data every GPU collective (NCCL, staged and GPU-aware MPI) starts from and is checked
// against, on the GPU.
//
// Element i of rank r's input is a small whole number (0..255) stored as a float, so every sum
// over up to 65536 ranks is exact in float and the result is checked for equality, element by
// element: a reduction that dropped a rank, a block sent to the wrong rank, or a stale buffer
// all show up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/gpu_runtime.h"
#include "core/collective.h"

namespace commatlas::cuda {

// Which output one rank should hold.
struct CollectiveExpectation {
  CollectiveOp op;
  std::uint64_t seed = 0;
  int rank = 0;
  int ranks = 1;
  int root = 0;                   // broadcast, reduce
  std::uint64_t chunk_elements = 0;  // per-rank block (allgather, reduce_scatter, alltoall)
};

// Whether this rank's output is defined at all (reduce: only the root's).
bool rank_has_output(const CollectiveExpectation& e);

void fill_collective_input(float* data, std::uint64_t elements, std::uint64_t seed, int rank, cudaStream_t stream);

// Index of the first element of `data` that differs from what `e` expects, or `elements` if none.
// Synchronises the stream.
std::uint64_t find_collective_mismatch(const float* data, std::uint64_t elements, const CollectiveExpectation& e,
                                       cudaStream_t stream);

}  // namespace commatlas::cuda
