#include "backends/host/pointer_chain.h"

#include <random>

#include "core/error.h"

namespace commatlas::host {

PointerChain::PointerChain(std::size_t bytes, std::optional<int> numa_node, std::uint64_t seed)
    : lines_(bytes / kLine), buffer_((lines_ < 2 ? 0 : lines_) * kLine, numa_node) {
  if (lines_ < 2) throw Skip("a pointer chase needs at least two 64-byte lines (128 B)");
  // Sattolo's algorithm on the line indices, in place in the buffer (no index array the size of
  // the working set): next[i] ends as a uniformly random permutation with a single cycle.
  auto next = [this](std::size_t i) -> std::uintptr_t& { return *reinterpret_cast<std::uintptr_t*>(line(i)); };
  for (std::size_t i = 0; i < lines_; ++i) next(i) = i;
  std::mt19937_64 rng(seed);
  for (std::size_t i = lines_ - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(next(i), next(pick(rng)));
  }
  for (std::size_t i = 0; i < lines_; ++i) next(i) = reinterpret_cast<std::uintptr_t>(line(next(i)));
}

Verification PointerChain::verify(const void* cursor, std::uint64_t steps_taken) const {
  Verification v;
  const auto base = reinterpret_cast<std::uintptr_t>(buffer_.data());
  const std::uint64_t expected_at = steps_taken % lines_;
  std::uintptr_t p = base;
  bool cursor_matches = expected_at == 0 && reinterpret_cast<std::uintptr_t>(cursor) == base;
  for (std::uint64_t step = 1; step <= lines_; ++step) {
    p = *reinterpret_cast<const std::uintptr_t*>(p);
    if (p < base || p >= base + lines_ * kLine || (p - base) % kLine != 0) {
      v.detail = "link " + std::to_string(step) + " points outside the chain";
      return v;
    }
    if (p == base && step < lines_) {
      v.detail = "chain returns to its start after " + std::to_string(step) + " of " + std::to_string(lines_) + " lines";
      return v;
    }
    if (step == expected_at && reinterpret_cast<std::uintptr_t>(cursor) == p) cursor_matches = true;
  }
  if (p != base) {
    v.detail = "chain does not return to its start after " + std::to_string(lines_) + " lines";
    return v;
  }
  if (!cursor_matches) {
    v.detail = "the timed loop ended at a different line than " + std::to_string(steps_taken) + " steps lead to";
    return v;
  }
  v.ok = true;
  v.bytes_checked = lines_ * sizeof(void*);
  return v;
}

}  // namespace commatlas::host
