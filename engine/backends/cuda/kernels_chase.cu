// Pointer-chase kernels: one thread, dependent loads, so each step costs one full load latency.
#include <algorithm>

#include "backends/cuda/kernels.h"

namespace commatlas::cuda {
namespace {

__global__ void chase_kernel(const unsigned char* base, unsigned long long* cursor, std::int64_t steps) {
  unsigned long long offset = *cursor;
  for (std::int64_t s = 0; s < steps; ++s) offset = *reinterpret_cast<const unsigned long long*>(base + offset);
  *cursor = offset;  // the end point is checked against the CPU's replay: the loads cannot be elided
}

__global__ void write_chain_kernel(unsigned char* base, const std::uint32_t* next, std::size_t n, std::size_t stride) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    *reinterpret_cast<unsigned long long*>(base + i * stride) = static_cast<unsigned long long>(next[i]) * stride;
}

}  // namespace

void detail::load_chase_kernels() {
  cudaFuncAttributes attributes;
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&chase_kernel)));
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&write_chain_kernel)));
}

void launch_chase(const unsigned char* base, unsigned long long* cursor, std::int64_t steps, cudaStream_t stream) {
  chase_kernel<<<1, 1, 0, stream>>>(base, cursor, steps);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

void launch_write_chain(unsigned char* base, const std::uint32_t* next, std::size_t n, std::size_t stride,
                        cudaStream_t stream) {
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 65535);
  write_chain_kernel<<<static_cast<unsigned>(std::max<std::size_t>(blocks, 1)), 256, 0, stream>>>(base, next, n, stride);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

}  // namespace commatlas::cuda
