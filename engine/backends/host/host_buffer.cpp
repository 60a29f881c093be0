#include "backends/host/host_buffer.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "backends/host/first_touch.h"
#include "core/error.h"
#include "core/process_state.h"
#include "core/sizes.h"

namespace commatlas::host {
namespace {

std::size_t page_size() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<std::size_t>(p) : 4096;
}

// Writes every page once from threads on the node's CPUs (first_touch.h): under the kernel's
// first-touch policy that node receives the pages. Without a node, from the node the calling
// thread runs on, as its own writes would have placed them.
void first_touch(unsigned char* p, std::size_t n, std::optional<int> node) {
  const auto zero = [p](std::size_t begin, std::size_t end) { std::memset(p + begin, 0, end - begin); };
  if (node)
    touch_in_parallel(n, cpus_of_node(*node), zero);
  else
    touch_from_this_node(n, zero);
}

}  // namespace

HostBuffer::HostBuffer(std::size_t bytes, std::optional<int> numa_node) : bytes_(bytes) {
  const std::size_t page = page_size();
  allocated_ = (bytes + page - 1) / page * page;
  if (allocated_ == 0) allocated_ = page;
  const Libnuma& numa = Libnuma::get();
  if (numa_node && numa.usable()) {
    data_ = static_cast<unsigned char*>(numa.alloc_on_node(allocated_, *numa_node));
    placement_ = NumaPlacement::Libnuma;
  } else {
    // Fresh pages, never the heap's: first_touch below must be these pages' first touch.
    data_ = static_cast<unsigned char*>(map_fresh_pages(allocated_));
  }
  if (!data_)
    throw Skip("cannot allocate " + format_size(allocated_) + " of host memory" +
               (numa_node ? " on NUMA node " + std::to_string(*numa_node) : std::string()));
  first_touch(data_, allocated_, numa_node);
}

HostBuffer::~HostBuffer() {
  if (placement_ == NumaPlacement::Libnuma)
    Libnuma::get().free(data_, allocated_);
  else
    unmap_pages(data_, allocated_);
}

}  // namespace commatlas::host
