// A random cyclic pointer chain for latency measurement: one pointer per 64-byte line, lines
// visited in a random single-cycle order, so every load depends on the previous one and lands on a
// new line the prefetchers cannot predict. The order is kept beside the chain (4 bytes a line), so
// the check compares every link with it, loads that do not depend on each other, instead of
// walking the chain: at 256 MiB the walk took 0.55-0.71 s of a 1-2 s point on the GPU machines.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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

  // Every line's pointer must be the next line of the order it was built in (which proves the
  // chain is that one cycle over every line), and `cursor` must be the line `steps_taken` steps
  // from line 0 (which proves the timed loop really chased).
  Verification verify(const void* cursor, std::uint64_t steps_taken) const;

 private:
  std::size_t lines_;
  HostBuffer buffer_;
  std::vector<std::uint32_t> order_;  // order_[k]: the line k steps from line 0 (order_[0] == 0)
};

}  // namespace commatlas::host
