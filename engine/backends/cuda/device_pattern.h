// The data pattern of core/pattern.h, filled and checked by the GPU in place, so verifying a
// multi-GiB device buffer costs milliseconds and needs no host copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/gpu_runtime.h"

namespace commatlas {

// Fills [ptr, ptr+n) with the pattern for `seed`; ptr must be accessible from the stream's device.
void fill_pattern_on_device(void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// Writes a byte value that is nowhere near the pattern, so a copy that did nothing is caught.
void poison_on_device(void* ptr, std::size_t n, cudaStream_t stream);

// Index of the first byte that differs from the pattern, or n if all match. Synchronises the stream.
std::size_t find_mismatch_on_device(const void* ptr, std::size_t n, std::uint64_t seed, cudaStream_t stream);

}  // namespace commatlas
