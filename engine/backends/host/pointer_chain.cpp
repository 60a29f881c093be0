#include "backends/host/pointer_chain.h"

#include <limits>
#include <numeric>
#include <random>

#include "core/error.h"

namespace commatlas::host {

PointerChain::PointerChain(std::size_t bytes, std::optional<int> numa_node, std::uint64_t seed)
    : lines_(bytes / kLine), buffer_((lines_ < 2 ? 0 : lines_) * kLine, numa_node) {
  if (lines_ < 2) throw Skip("a pointer chase needs at least two 64-byte lines (128 B)");
  if (lines_ > std::numeric_limits<std::uint32_t>::max())
    throw Skip("a pointer chase over more than 2^32 lines (256 GiB) is not built here");
  // Line 0 first, then every other line in a uniformly random order (Fisher-Yates): following the
  // order and back to line 0 is a uniformly random single cycle, as Sattolo's algorithm gives.
  order_.resize(lines_);
  std::iota(order_.begin(), order_.end(), std::uint32_t{0});
  std::mt19937_64 rng(seed);
  for (std::size_t i = lines_ - 1; i > 1; --i) {
    std::uniform_int_distribution<std::size_t> pick(1, i);
    std::swap(order_[i], order_[pick(rng)]);
  }
  for (std::size_t k = 0; k < lines_; ++k)
    *reinterpret_cast<std::uintptr_t*>(line(order_[k])) = reinterpret_cast<std::uintptr_t>(line(order_[(k + 1) % lines_]));
}

Verification PointerChain::verify(const void* cursor, std::uint64_t steps_taken) const {
  Verification v;
  const auto at = [this](std::size_t i) { return reinterpret_cast<std::uintptr_t>(buffer_.data() + i * kLine); };
  for (std::size_t k = 0; k < lines_; ++k) {
    const std::uintptr_t link = *reinterpret_cast<const std::uintptr_t*>(at(order_[k]));
    if (link != at(order_[(k + 1) % lines_])) {
      v.detail = "link " + std::to_string(k + 1) + " of " + std::to_string(lines_) + " (from line " +
                 std::to_string(order_[k]) + ") does not point at the chain's next line";
      return v;
    }
  }
  if (reinterpret_cast<std::uintptr_t>(cursor) != at(order_[steps_taken % lines_])) {
    v.detail = "the timed loop ended at a different line than " + std::to_string(steps_taken) + " steps lead to";
    return v;
  }
  v.ok = true;
  v.bytes_checked = lines_ * sizeof(void*);
  return v;
}

}  // namespace commatlas::host
