// STREAM read (sum) and write (fill) kernels, same shape rules as the copy kernel.
#include <algorithm>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/kernels.h"

namespace commatlas::cuda {
namespace {

// The 64-bit-word sum is the same whatever the access width: a 4-byte element at index i is the
// low (even i) or high (odd i) half of word i/2, and lo + hi * 2^32 is the word exactly.
__device__ inline unsigned long long contribution(uint4 v, std::size_t) {
  return ((static_cast<unsigned long long>(v.y) << 32) | v.x) + ((static_cast<unsigned long long>(v.w) << 32) | v.z);
}
__device__ inline unsigned long long contribution(unsigned v, std::size_t i) {
  return static_cast<unsigned long long>(v) << (32 * (i & 1));
}

__device__ inline void fill_element(uint4* p, std::size_t i, std::uint64_t key) {
  const std::uint64_t w0 = key ^ (2 * i), w1 = key ^ (2 * i + 1);
  p[i] = make_uint4(static_cast<unsigned>(w0), static_cast<unsigned>(w0 >> 32), static_cast<unsigned>(w1),
                    static_cast<unsigned>(w1 >> 32));
}
__device__ inline void fill_element(unsigned* p, std::size_t i, std::uint64_t key) {
  p[i] = static_cast<unsigned>((key ^ (i >> 1)) >> (32 * (i & 1)));
}

template <typename V, int U>
__global__ void read_sum_kernel(const V* __restrict__ src, std::size_t n, unsigned long long* sum) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    V v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += contribution(v[u], i + u * stride);
  }
  for (; i < n; i += stride) acc += contribution(src[i], i);
  acc = warp_sum(acc);
  if (threadIdx.x % warpSize == 0) atomicAdd(sum, acc);
}

template <typename V, int U>
__global__ void fill_kernel(V* __restrict__ dst, std::size_t n, std::uint64_t key) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
#pragma unroll
    for (int u = 0; u < U; ++u) fill_element(dst, i + u * stride, key);
  }
  for (; i < n; i += stride) fill_element(dst, i, key);
}

__global__ void fill_mismatch_kernel(const std::uint64_t* p, std::size_t words, std::uint64_t key,
                                     unsigned long long* first_bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t w = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride)
    if (p[w] != (key ^ w)) atomicMin(first_bad, static_cast<unsigned long long>(w));
}

int blocks_for(std::size_t elements, int max_blocks) {
  const std::size_t wanted = (elements + KernelShape::kThreadsPerBlock - 1) / KernelShape::kThreadsPerBlock;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, max_blocks)));
}

void require_multiple_of_16(std::size_t bytes, const void* p) {
  if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    throw Skip("STREAM kernels need 16-byte aligned arrays whose size is a multiple of 16 bytes");
}

template <typename V>
void launch_read_width(const void* src, std::size_t bytes, unsigned long long* sum, int unroll, int max_blocks,
                       cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(V);
  const int blocks = blocks_for(n, max_blocks);
  if (unroll == 4)
    read_sum_kernel<V, 4><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(static_cast<const V*>(src), n, sum);
  else
    read_sum_kernel<V, 1><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(static_cast<const V*>(src), n, sum);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

template <typename V>
void launch_fill_width(void* dst, std::size_t bytes, std::uint64_t key, int unroll, int max_blocks, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(V);
  const int blocks = blocks_for(n, max_blocks);
  if (unroll == 4)
    fill_kernel<V, 4><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(static_cast<V*>(dst), n, key);
  else
    fill_kernel<V, 1><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(static_cast<V*>(dst), n, key);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

}  // namespace

void detail::load_stream_kernels() {
  cudaFuncAttributes attributes;
  for (const void* kernel : {reinterpret_cast<const void*>(&read_sum_kernel<uint4, 4>),
                             reinterpret_cast<const void*>(&read_sum_kernel<uint4, 1>),
                             reinterpret_cast<const void*>(&read_sum_kernel<unsigned, 4>),
                             reinterpret_cast<const void*>(&read_sum_kernel<unsigned, 1>),
                             reinterpret_cast<const void*>(&fill_kernel<uint4, 4>),
                             reinterpret_cast<const void*>(&fill_kernel<uint4, 1>),
                             reinterpret_cast<const void*>(&fill_kernel<unsigned, 4>),
                             reinterpret_cast<const void*>(&fill_kernel<unsigned, 1>),
                             reinterpret_cast<const void*>(&fill_mismatch_kernel)})
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, kernel));
}

void launch_read_sum(const void* src, std::size_t bytes, unsigned long long* sum, const KernelShape& shape, int sms,
                     cudaStream_t stream) {
  require_multiple_of_16(bytes, src);
  const int max_blocks = sms * shape.blocks_per_sm;
  if (shape.vector_bytes == 16)
    launch_read_width<uint4>(src, bytes, sum, shape.unroll, max_blocks, stream);
  else
    launch_read_width<unsigned>(src, bytes, sum, shape.unroll, max_blocks, stream);
}

void launch_fill_words(void* dst, std::size_t bytes, std::uint64_t key, const KernelShape& shape, int sms,
                       cudaStream_t stream) {
  require_multiple_of_16(bytes, dst);
  const int max_blocks = sms * shape.blocks_per_sm;
  if (shape.vector_bytes == 16)
    launch_fill_width<uint4>(dst, bytes, key, shape.unroll, max_blocks, stream);
  else
    launch_fill_width<unsigned>(dst, bytes, key, shape.unroll, max_blocks, stream);
}

std::size_t find_fill_mismatch_on_device(const void* p, std::size_t bytes, std::uint64_t key, cudaStream_t stream) {
  const std::size_t words = bytes / 8;
  if (words == 0) return 0;
  return static_cast<std::size_t>(first_flagged_index(words, stream, [&](unsigned long long* first_bad) {
    fill_mismatch_kernel<<<blocks_for(words, 65535 * 8), KernelShape::kThreadsPerBlock, 0, stream>>>(
        static_cast<const std::uint64_t*>(p), words, key, first_bad);
  }));
}

}  // namespace commatlas::cuda
