// A source and a destination for a host copy, filled and checked against the data pattern.
//
// The source holds the pattern for the run's seed; the destination is poisoned at setup and again
// before each timed batch (poison()), so only that batch can make it match.
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

  // Overwrites the destination (or bytes [begin, begin + length) of it) with bytes that differ
  // from the pattern; outside the timed window.
  void poison() { poison(0, bytes_); }
  void poison(std::size_t begin, std::size_t length);
  // Destination against the pattern; on failure, the first bad offset and how many bytes differ.
  Verification verify() const;

 private:
  std::size_t bytes_;
  std::uint64_t seed_;
  HostBuffer src_;
  HostBuffer dst_;
};

}  // namespace commatlas::host
