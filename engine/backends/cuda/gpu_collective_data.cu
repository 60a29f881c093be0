#include "backends/cuda/gpu_collective_data.h"
#include "backends/cuda/device_pattern.h"

#include "core/pattern.h"

namespace commatlas::cuda {
namespace {

constexpr int kThreads = 256;

int grid_for(std::uint64_t n) {
  const std::uint64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks == 0 ? 1 : (blocks < 65535ull * 8 ? blocks : 65535ull * 8));
}

__host__ __device__ inline float input_value(std::uint64_t seed, int rank, std::uint64_t i) {
  return static_cast<float>(pattern_word(seed * 1000003ull + static_cast<std::uint64_t>(rank), i) & 0xFFu);
}

__host__ __device__ inline float reduced_value(std::uint64_t seed, int ranks, std::uint64_t i) {
  float sum = 0;
  for (int r = 0; r < ranks; ++r) sum += input_value(seed, r, i);
  return sum;
}

__device__ float expected_value(const CollectiveExpectation& e, std::uint64_t j) {
  const std::uint64_t c = e.chunk_elements;
  switch (e.op) {
    case CollectiveOp::AllReduce:
    case CollectiveOp::Reduce: return reduced_value(e.seed, e.ranks, j);
    case CollectiveOp::Broadcast: return input_value(e.seed, e.root, j);
    case CollectiveOp::AllGather: return input_value(e.seed, static_cast<int>(j / c), j % c);
    case CollectiveOp::ReduceScatter: return reduced_value(e.seed, e.ranks, static_cast<std::uint64_t>(e.rank) * c + j);
    case CollectiveOp::AllToAll:
      return input_value(e.seed, static_cast<int>(j / c), static_cast<std::uint64_t>(e.rank) * c + j % c);
  }
  return -1;
}

__global__ void fill_kernel(float* data, std::uint64_t n, std::uint64_t seed, int rank) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    data[i] = input_value(seed, rank, i);
}

__global__ void check_kernel(const float* data, std::uint64_t n, CollectiveExpectation e,
                             unsigned long long* first_bad) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    // != is exact on purpose: every expected value is a whole number well inside float's range.
    if (!(data[i] == expected_value(e, i))) {
      atomicMin(first_bad, static_cast<unsigned long long>(i));
      return;
    }
  }
}

}  // namespace

bool rank_has_output(const CollectiveExpectation& e) { return e.op != CollectiveOp::Reduce || e.rank == e.root; }

void fill_collective_input(float* data, std::uint64_t elements, std::uint64_t seed, int rank, cudaStream_t stream) {
  if (elements == 0) return;
  fill_kernel<<<grid_for(elements), kThreads, 0, stream>>>(data, elements, seed, rank);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

std::uint64_t find_collective_mismatch(const float* data, std::uint64_t elements, const CollectiveExpectation& e,
                                       cudaStream_t stream) {
  if (elements == 0) return 0;
  return first_flagged_index(elements, stream, [&](unsigned long long* first_bad) {
    check_kernel<<<grid_for(elements), kThreads, 0, stream>>>(data, elements, e, first_bad);
  });
}

}  // namespace commatlas::cuda
