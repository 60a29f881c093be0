// The data pattern of core/pattern.h, filled and checked by the GPU in place, so verifying a
// multi-GiB device buffer costs milliseconds and needs no host copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/gpu_runtime.h"

namespace commatlas::cuda {

// Fills [ptr, ptr+n) with the pattern for `seed`; ptr must be accessible from the stream's device.
void fill_pattern_on_device(void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// Writes a byte value that is nowhere near the pattern, so a copy that did nothing is caught.
void poison_on_device(void* ptr, std::size_t n, cudaStream_t stream);

// The same bytes as poison_on_device, stored by a kernel on the stream's GPU through `ptr` (any
// pointer that GPU's kernels can dereference: peer, mapped host, managed, pageable with HMM). A
// destination that timed kernels write is poisoned this way between batches: the stores go where
// the timed stores go, so managed pages stay where the warm-up put them and no memory the runtime
// cannot memset (pageable) is handed to cudaMemset.
void poison_with_kernel(void* ptr, std::size_t n, cudaStream_t stream);

// Index of the first byte that differs from the pattern, or n if all match. Synchronises the stream.
std::size_t find_mismatch_on_device(const void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// The one way every on-device check reports back: `launch(first_bad)` enqueues a kernel on `stream`
// that atomicMin's the index of each mismatch it finds into *first_bad; the result is the smallest
// index flagged, or `none` when nothing was. Synchronises the stream.
template <typename Launch>
std::uint64_t first_flagged_index(std::uint64_t none, cudaStream_t stream, Launch&& launch) {
  unsigned long long* first_bad = nullptr;
  COMMATLAS_GPU_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&first_bad), sizeof *first_bad, stream));
  const unsigned long long start = none;
  COMMATLAS_GPU_CHECK(cudaMemcpyAsync(first_bad, &start, sizeof start, cudaMemcpyHostToDevice, stream));
  launch(first_bad);
  COMMATLAS_GPU_CHECK_LAUNCH();
  unsigned long long result = 0;
  COMMATLAS_GPU_CHECK(cudaMemcpyAsync(&result, first_bad, sizeof result, cudaMemcpyDeviceToHost, stream));
  COMMATLAS_GPU_CHECK(cudaFreeAsync(first_bad, stream));
  COMMATLAS_GPU_CHECK(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace commatlas::cuda
