// A random single cycle over n nodes (Sattolo's algorithm): the order a pointer chase visits its
// lines in. Shared by every chase whose chain is not built in place (GPU memory is written from
// this list by a kernel; CPU-built chains in pinned or managed memory are written from it too),
// so the CPU can replay any number of steps without reading the chain back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commatlas {

class RandomCycle {
 public:
  // n >= 2 nodes (fewer throws std::invalid_argument: a chain needs somewhere to go).
  RandomCycle(std::size_t n, std::uint64_t seed);

  std::size_t size() const { return next_.size(); }
  // The node that follows node i.
  std::uint32_t next(std::size_t i) const { return next_[i]; }
  const std::vector<std::uint32_t>& next_table() const { return next_; }
  // The node reached after `steps` steps from node 0 (O(1): the walk is recorded once).
  std::uint32_t after(std::uint64_t steps) const { return order_[steps % order_.size()]; }

 private:
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> order_;  // order_[k]: node after k steps from node 0
};

}  // namespace commatlas
