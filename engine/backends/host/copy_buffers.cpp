#include "backends/host/copy_buffers.h"

#include "core/pattern.h"

#include <stdexcept>

namespace commatlas::host {

CopyBuffers::CopyBuffers(std::size_t bytes, std::optional<int> src_node, std::optional<int> dst_node, std::uint64_t seed)
    : bytes_(bytes), seed_(seed), src_(bytes, src_node), dst_(bytes, dst_node) {
  fill_pattern(src_.data(), bytes_, seed_);
  poison_destination();
}

void CopyBuffers::poison_destination() {
  fill_pattern(dst_.data(), bytes_, seed_);
  for (std::size_t i = 0; i < bytes_; ++i) dst_.data()[i] = static_cast<unsigned char>(~dst_.data()[i]);
}

void CopyBuffers::resize(std::size_t bytes) {
  if (bytes > src_.size()) throw std::logic_error("CopyBuffers::resize past the allocated size");
  // The pattern is a function of the byte's index: the source's prefix already holds it. The
  // destination's prefix holds the larger copy's bytes, which a copy that did nothing would pass.
  bytes_ = bytes;
  poison_destination();
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
