// A source and a destination for a host copy, filled and checked against the data pattern.
//
// The source holds the pattern for the run's seed; the destination starts as the bitwise
// complement of it, so every byte a copy fails to move differs (a 1-byte copy that did nothing
// cannot match by chance).
#pragma once

#include <cstdint>
#include <optional>

#include "backends/host/host_buffer.h"
#include "core/benchmark.h"

namespace commatlas::host {

class CopyBuffers {
 public:
  CopyBuffers(std::size_t bytes, std::optional<int> src_node, std::optional<int> dst_node, std::uint64_t seed);

  const unsigned char* source() const { return src_.data(); }
  unsigned char* destination() { return dst_.data(); }
  std::size_t size() const { return bytes_; }
  // Both buffers placed by libnuma, or "none" if either is not.
  NumaPlacement placement() const;

  // Works on the first `bytes` of the buffers from now on (no more than they were made with).
  void resize(std::size_t bytes);

  // Destination against the pattern; on failure, the first bad offset and how many bytes differ.
  Verification verify() const;

 private:
  void poison_destination();
  std::size_t bytes_;
  std::uint64_t seed_;
  HostBuffer src_;
  HostBuffer dst_;
};

}  // namespace commatlas::host
