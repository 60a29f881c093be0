#include "backends/cuda/kernels.h"

#include <algorithm>

#include "backends/cuda/memory.h"

namespace commatlas::cuda {
namespace {

// V: the access width (uint4 = 16 B, unsigned = 4 B, unsigned char when misaligned).
// U: loads issued before the first store, so U requests per thread are in flight at once; the
// latency of remote memory (NVLink, PCIe) is only hidden by many outstanding loads.
template <typename V, int U>
__global__ void copy_kernel(V* __restrict__ dst, const V* __restrict__ src, std::size_t n,
                            unsigned char* __restrict__ dst_tail, const unsigned char* __restrict__ src_tail, int tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    V v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
  if (tail > 0 && blockIdx.x == 0 && threadIdx.x == 0)
    for (int b = 0; b < tail; ++b) dst_tail[b] = src_tail[b];
}

template <typename V>
void launch_copy_width(void* dst, const void* src, std::size_t bytes, int unroll, int max_blocks, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(V);
  const int tail = static_cast<int>(bytes - n * sizeof(V));
  const std::size_t wanted = (n + KernelShape::kThreadsPerBlock - 1) / KernelShape::kThreadsPerBlock;
  const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, max_blocks)));
  auto* d = static_cast<V*>(dst);
  auto* s = static_cast<const V*>(src);
  auto* dt = static_cast<unsigned char*>(dst) + n * sizeof(V);
  auto* st = static_cast<const unsigned char*>(src) + n * sizeof(V);
  if (unroll == 4)
    copy_kernel<V, 4><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(d, s, n, dt, st, tail);
  else
    copy_kernel<V, 1><<<blocks, KernelShape::kThreadsPerBlock, 0, stream>>>(d, s, n, dt, st, tail);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

}  // namespace

int sm_count(int device) {
  int sms = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

void load_kernels(int device) {
  DeviceScope scope(device);
  cudaFuncAttributes attributes;
  for (const void* kernel : {reinterpret_cast<const void*>(&copy_kernel<uint4, 4>),
                             reinterpret_cast<const void*>(&copy_kernel<uint4, 1>),
                             reinterpret_cast<const void*>(&copy_kernel<unsigned, 4>),
                             reinterpret_cast<const void*>(&copy_kernel<unsigned, 1>),
                             reinterpret_cast<const void*>(&copy_kernel<unsigned char, 1>)})
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  detail::load_stream_kernels();
  detail::load_chase_kernels();
}

void launch_copy(void* dst, const void* src, std::size_t bytes, const KernelShape& shape, int sms, cudaStream_t stream) {
  if (bytes == 0) return;
  const int max_blocks = sms * shape.blocks_per_sm;
  const std::size_t width = static_cast<std::size_t>(shape.vector_bytes);
  if (!aligned(dst, width) || !aligned(src, width))
    launch_copy_width<unsigned char>(dst, src, bytes, 1, max_blocks, stream);
  else if (width == 16)
    launch_copy_width<uint4>(dst, src, bytes, shape.unroll, max_blocks, stream);
  else
    launch_copy_width<unsigned>(dst, src, bytes, shape.unroll, max_blocks, stream);
}

}  // namespace commatlas::cuda
