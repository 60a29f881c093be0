#include "backends/cuda/device_pattern.h"

#include "core/pattern.h"

namespace commatlas::cuda {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t words) {
  const std::size_t blocks = (words + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks == 0 ? 1 : blocks) : 65535 * 8);
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint64_t seed) {
  const std::size_t words = n / 8;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words; w += stride) {
    const std::uint64_t v = pattern_word(seed, w);
    // Byte stores: the buffer may start at any alignment (an offset into a larger one).
    for (int b = 0; b < 8; ++b) p[8 * w + b] = static_cast<unsigned char>(v >> (8 * b));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::size_t i = words * 8; i < n; ++i) p[i] = pattern_byte(seed, i);
}

__global__ void fill_kernel_aligned(std::uint64_t* p, std::size_t n, std::uint64_t seed) {
  const std::size_t words = n / 8;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words; w += stride)
    p[w] = pattern_word(seed, w);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    auto* bytes = reinterpret_cast<unsigned char*>(p);
    for (std::size_t i = words * 8; i < n; ++i) bytes[i] = pattern_byte(seed, i);
  }
}

__global__ void poison_kernel(unsigned char* p, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t head = (8 - reinterpret_cast<std::uintptr_t>(p) % 8) % 8;  // bytes before the first word
  const std::size_t lead = head < n ? head : n;
  auto* words = reinterpret_cast<std::uint64_t*>(p + lead);
  const std::size_t count = (n - lead) / 8;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < count; w += stride)
    words[w] = 0xA5A5A5A5A5A5A5A5ull;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::size_t i = 0; i < lead; ++i) p[i] = 0xA5;
    for (std::size_t i = lead + count * 8; i < n; ++i) p[i] = 0xA5;
  }
}

__global__ void find_mismatch_kernel(const unsigned char* p, std::size_t n, std::uint64_t seed,
                                     unsigned long long* first_bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t words = (n + 7) / 8;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words; w += stride) {
    const std::uint64_t expect = pattern_word(seed, w);
    for (int b = 0; b < 8 && 8 * w + b < n; ++b) {
      if (p[8 * w + b] != static_cast<unsigned char>(expect >> (8 * b))) {
        atomicMin(first_bad, static_cast<unsigned long long>(8 * w + b));
        break;
      }
    }
  }
}

}  // namespace

void fill_pattern_on_device(void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  if (reinterpret_cast<std::uintptr_t>(ptr) % 8 == 0)
    fill_kernel_aligned<<<grid_for(n / 8), kThreads, 0, stream>>>(static_cast<std::uint64_t*>(ptr), n, seed);
  else
    fill_kernel<<<grid_for(n / 8), kThreads, 0, stream>>>(static_cast<unsigned char*>(ptr), n, seed);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

void poison_on_device(void* ptr, std::size_t n, cudaStream_t stream) {
  COMMATLAS_GPU_CHECK(cudaMemsetAsync(ptr, 0xA5, n, stream));
}

void poison_with_kernel(void* ptr, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  poison_kernel<<<grid_for(n / 8), kThreads, 0, stream>>>(static_cast<unsigned char*>(ptr), n);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

std::size_t find_mismatch_on_device(const void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return 0;
  return static_cast<std::size_t>(first_flagged_index(n, stream, [&](unsigned long long* first_bad) {
    find_mismatch_kernel<<<grid_for((n + 7) / 8), kThreads, 0, stream>>>(static_cast<const unsigned char*>(ptr), n,
                                                                          seed, first_bad);
  }));
}

}  // namespace commatlas::cuda
