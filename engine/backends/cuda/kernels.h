// The SM kernels of the GPU suite: the copy kernel (SM copy and STREAM copy), STREAM read and
// write, and the pointer chase. Every launcher takes the shape explicitly (copy_plan.h), so the
// shape a record names is the shape that ran.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/gpu_runtime.h"

namespace commatlas::cuda {

int sm_count(int device);

// Loads every kernel of this file set on `device` now. With lazy module loading (the CUDA 12+
// default) a kernel's first launch loads its module and waits for the device, so a first launch
// queued behind the start-blocking spin kernel would wait for that kernel, which waits for the
// host: a deadlock until the spin times out. Workloads call this before any blocked start.
void load_kernels(int device);

namespace detail {
void load_stream_kernels();
void load_chase_kernels();
}  // namespace detail

// dst[0, bytes) = src[0, bytes): vector accesses where both are aligned to the vector width,
// a byte tail, grid-stride, `unroll` independent loads in flight per thread.
void launch_copy(void* dst, const void* src, std::size_t bytes, const KernelShape& shape, int sms, cudaStream_t stream);

// *sum += the sum (mod 2^64) of the little-endian 64-bit words of src. bytes % 16 == 0.
void launch_read_sum(const void* src, std::size_t bytes, unsigned long long* sum, const KernelShape& shape, int sms,
                     cudaStream_t stream);

// Word i of dst = key ^ i: a fill whose content a check can predict, cheap enough that the
// kernel is bound by the stores, not by computing the pattern. bytes % 16 == 0.
void launch_fill_words(void* dst, std::size_t bytes, std::uint64_t key, const KernelShape& shape, int sms,
                       cudaStream_t stream);

// Index of the first 64-bit word of p that is not key ^ index, or bytes / 8. Synchronises.
std::size_t find_fill_mismatch_on_device(const void* p, std::size_t bytes, std::uint64_t key, cudaStream_t stream);

// One thread follows `steps` links from the byte offset in *cursor and stores where it ended.
// Each chain word holds the byte offset of the next link from `base`.
void launch_chase(const unsigned char* base, unsigned long long* cursor, std::int64_t steps, cudaStream_t stream);

// Writes the chain: the word at base + i*stride holds next[i]*stride.
void launch_write_chain(unsigned char* base, const std::uint32_t* next, std::size_t n, std::size_t stride,
                        cudaStream_t stream);

}  // namespace commatlas::cuda
