// The data pattern every benchmark writes into its source and checks at its destination.
//
// Byte i of a buffer filled with seed s is a function of (s, i), so a copy that moved nothing,
// moved the wrong range, or moved stale data from an earlier size is caught. The function is
// usable from host and device code so that GPU kernels can fill and check in place.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define COMMATLAS_HD __host__ __device__
#else
#define COMMATLAS_HD
#endif

namespace commatlas {

COMMATLAS_HD inline std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t word_index) {
  // splitmix64: cheap, and every bit depends on both inputs.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + word_index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

COMMATLAS_HD inline std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t byte_index) {
  return static_cast<std::uint8_t>(pattern_word(seed, byte_index / 8) >> (8 * (byte_index % 8)));
}

// Fills bytes [0, n) of dst with the pattern for `seed` (little-endian word layout).
void fill_pattern(void* dst, std::size_t n, std::uint64_t seed);

// Bytes [begin, end) of the buffer as fill_pattern writes them: threads that each fill a part of
// one buffer write the same bytes as one fill.
void fill_pattern_part(void* dst, std::size_t begin, std::size_t end, std::uint64_t seed);

// Index of the first byte of [0, n) that differs from the pattern, or n if all match.
std::size_t find_pattern_mismatch(const void* src, std::size_t n, std::uint64_t seed);

// Number of bytes of [0, n) that differ from the pattern (used to size a failure report).
std::size_t count_pattern_mismatches(const void* src, std::size_t n, std::uint64_t seed);

}  // namespace commatlas
