// A pointer-chase chain in GPU-suite memory (local or peer HBM, pinned, managed): one link per
// 256 bytes, in a random single-cycle order. 256 B puts every link in its own 128-byte cache
// line with a line between them, so neither the GPU's sector/line fetch nor a CPU adjacent-line
// prefetcher brings in the next link; the random order defeats stride prefetchers.
// Each link holds the byte offset of the next one, so the same chain is valid through the CPU's
// and the GPU's address of the memory.
#pragma once

#include <cstdint>

#include "backends/cuda/placement.h"
#include "core/random_cycle.h"

namespace commatlas::cuda {

class ChaseChain {
 public:
  static constexpr std::size_t kStride = 256;

  // Builds the chain over `bytes` (at least 2 links, else Skip) where `where` says, for a chase
  // run by `gpu`: by a kernel on the owning GPU for device memory, by the CPU otherwise.
  ChaseChain(Location where, int gpu, std::size_t bytes, std::uint64_t seed);

  std::size_t links() const { return cycle_.size(); }
  const unsigned char* kernel_base(int gpu) const { return static_cast<const unsigned char*>(buffer_.kernel_pointer(gpu)); }
  // The CPU's address; Skip for device memory the CPU cannot load from.
  const unsigned char* host_base() const;

  // The chase must end where the CPU's replay of the same number of steps from link 0 ends.
  Verification check(std::uint64_t end_offset, std::uint64_t steps) const;

 private:
  RandomCycle cycle_;
  PlacedBuffer buffer_;
};

}  // namespace commatlas::cuda
