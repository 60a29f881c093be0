// What host benchmarks read off the context: the NUMA nodes to sweep, the memory they may take.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "core/sizes.h"

namespace commatlas::host {

// --numa if given, else every node with memory.
inline std::vector<int> numa_nodes_to_sweep(const Context& ctx) {
  return ctx.options.numa_nodes.empty() ? ctx.host.numa_nodes : ctx.options.numa_nodes;
}

// A point may take at most half the memory that was available at start: the rest belongs to the
// OS and to whatever else runs here, and swapping would time the disk.
inline void require_host_memory(const Context& ctx, std::uint64_t bytes) {
  if (bytes > ctx.host.memory_available / 2)
    throw Skip("needs " + format_size(bytes) + " of host memory, more than half of the " +
               format_size(ctx.host.memory_available) + " available");
}

}  // namespace commatlas::host
