// A host buffer owned by RAII: page-aligned, placed on a NUMA node where libnuma allows, and
// first touched by threads running on that node (first_touch.h: so pages land there even where
// binding is advisory, and page faults never fall inside a timed loop).
#pragma once

#include <cstddef>
#include <optional>

#include "backends/host/numa.h"

namespace commatlas::host {

class HostBuffer {
 public:
  // `numa_node`: where the pages should live; nullopt leaves placement to the kernel. Throws
  // Skip when the memory cannot be had.
  HostBuffer(std::size_t bytes, std::optional<int> numa_node);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  NumaPlacement placement() const { return placement_; }

 private:
  unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t allocated_ = 0;  // rounded up to whole pages
  NumaPlacement placement_ = NumaPlacement::None;
};

}  // namespace commatlas::host
