#include "core/random_cycle.h"

#include <random>
#include <stdexcept>
#include <string>

namespace commatlas {

RandomCycle::RandomCycle(std::size_t n, std::uint64_t seed) {
  if (n < 2) throw std::invalid_argument("a random cycle needs at least 2 nodes, got " + std::to_string(n));
  if (n > UINT32_MAX) throw std::invalid_argument("a random cycle holds at most 2^32-1 nodes");
  next_.resize(n);
  for (std::size_t i = 0; i < n; ++i) next_[i] = static_cast<std::uint32_t>(i);
  // Sattolo: swapping only with strictly earlier slots yields a permutation with one cycle, so
  // a chase from any node visits every node before it comes back.
  std::mt19937_64 rng(seed);
  for (std::size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(next_[i], next_[pick(rng)]);
  }
  order_.resize(n);
  std::uint32_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    order_[k] = at;
    at = next_[at];
  }
}

}  // namespace commatlas
