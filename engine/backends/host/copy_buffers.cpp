#include "backends/host/copy_buffers.h"

#include <cstring>

#include "core/pattern.h"

#include <stdexcept>

namespace commatlas::host {

CopyBuffers::CopyBuffers(std::size_t bytes, std::optional<int> src_node, std::optional<int> dst_node, std::uint64_t seed)
    : bytes_(bytes), seed_(seed), src_(bytes, src_node), dst_(bytes, dst_node) {
  fill_pattern(src_.data(), bytes_, seed_);
  poison();
}

void CopyBuffers::poison(std::size_t begin, std::size_t length) {
  // A memset runs at memory speed (the pattern's complement costs a hash per word, several times
  // as long, and this runs before every timed batch). About 1 byte in 256 of the pattern is 0xA5
  // by chance, so the first bytes are the pattern's complement: a copy that moved nothing fails
  // the check at every size, 1 byte included.
  std::memset(dst_.data() + begin, 0xA5, length);
  for (std::size_t i = begin; i < begin + length && i < 8; ++i)
    dst_.data()[i] = static_cast<unsigned char>(~pattern_byte(seed_, i));
}

void CopyBuffers::resize(std::size_t bytes) {
  if (bytes > src_.size()) throw std::logic_error("CopyBuffers::resize past the allocated size");
  // The pattern is a function of the byte's index: the source's prefix already holds it. The
  // destination's prefix holds the larger copy's bytes, which a copy that did nothing would pass.
  bytes_ = bytes;
  poison();
}

NumaPlacement CopyBuffers::placement() const {
  return src_.placement() == NumaPlacement::Libnuma && dst_.placement() == NumaPlacement::Libnuma
             ? NumaPlacement::Libnuma
             : NumaPlacement::None;
}

Verification CopyBuffers::verify() const {
  Verification v;
  v.bytes_checked = bytes_;
  const std::size_t bad = find_pattern_mismatch(dst_.data(), bytes_, seed_);
  v.ok = bad == bytes_;
  if (!v.ok)
    v.detail = "destination byte " + std::to_string(bad) + " of " + std::to_string(bytes_) +
               " differs from the source pattern (" +
               std::to_string(count_pattern_mismatches(dst_.data(), bytes_, seed_)) + " bytes differ)";
  return v;
}

}  // namespace commatlas::host
