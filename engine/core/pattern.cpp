#include "core/pattern.h"

#include <cstring>

namespace commatlas {

void fill_pattern(void* dst, std::size_t n, std::uint64_t seed) { fill_pattern_part(dst, 0, n, seed); }

void fill_pattern_part(void* dst, std::size_t begin, std::size_t end, std::uint64_t seed) {
  auto* out = static_cast<unsigned char*>(dst);
  std::size_t i = begin;
  for (; i < end && i % 8 != 0; ++i) out[i] = pattern_byte(seed, i);
  for (std::size_t w = i / 8; 8 * w + 8 <= end; ++w, i += 8) {
    const std::uint64_t v = pattern_word(seed, w);
    std::memcpy(out + 8 * w, &v, 8);  // memcpy: dst need not be 8-byte aligned
  }
  for (; i < end; ++i) out[i] = pattern_byte(seed, i);
}

std::size_t find_pattern_mismatch(const void* src, std::size_t n, std::uint64_t seed) {
  const auto* in = static_cast<const unsigned char*>(src);
  const std::size_t words = n / 8;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t v;
    std::memcpy(&v, in + 8 * w, 8);
    if (v != pattern_word(seed, w)) {
      for (std::size_t i = 8 * w;; ++i)
        if (in[i] != pattern_byte(seed, i)) return i;
    }
  }
  for (std::size_t i = words * 8; i < n; ++i)
    if (in[i] != pattern_byte(seed, i)) return i;
  return n;
}

std::size_t count_pattern_mismatches(const void* src, std::size_t n, std::uint64_t seed) {
  const auto* in = static_cast<const unsigned char*>(src);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += in[i] != pattern_byte(seed, i);
  return bad;
}

}  // namespace commatlas
