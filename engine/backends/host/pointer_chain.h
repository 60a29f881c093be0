// A random cyclic pointer chain for latency measurement: one pointer per 64-byte line, lines
// visited in a random single-cycle order (Sattolo's algorithm), so every load depends on the
// previous one and lands on a new line the prefetchers cannot predict.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/host/host_buffer.h"
#include "core/benchmark.h"

namespace commatlas::host {

class PointerChain {
 public:
  static constexpr std::size_t kLine = 64;

  // Uses bytes / 64 lines (at least 2, else Skip).
  PointerChain(std::size_t bytes, std::optional<int> numa_node, std::uint64_t seed);

  std::size_t lines() const { return lines_; }
  void* start() { return line(0); }
  void* line(std::size_t i) { return buffer_.data() + i * kLine; }
  NumaPlacement placement() const { return buffer_.placement(); }

  // Walks the chain from line 0 with bounds checks: it must return to line 0 after exactly
  // lines() steps, never earlier (which proves every line is visited once), and the node reached
  // after `steps_taken` steps must be `cursor` (which proves the timed loop really chased).
  Verification verify(const void* cursor, std::uint64_t steps_taken) const;

 private:
  std::size_t lines_;
  HostBuffer buffer_;
};

}  // namespace commatlas::host
