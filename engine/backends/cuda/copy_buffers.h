// A GPU-suite buffer made the way a BufferSpec says: allocator, owning GPU, and who touches it
// first. Filling with the pattern and poisoning are done by that first toucher (the CPU or the
// owning GPU), because for managed memory that decides where the pages live when timing starts.
#pragma once

#include <cstdint>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/memory.h"
#include "core/benchmark.h"

namespace commatlas::cuda {

class PlacedBuffer {
 public:
  PlacedBuffer(const BufferSpec& where, std::size_t bytes);

  // Works on the first `bytes` from now on (fill, poison, check, bytes()): a size sweep runs
  // inside the buffer made for its largest size. Throws std::logic_error past the allocation.
  void resize(std::size_t bytes);
  // Managed memory: where its pages live depends on what touched them last, so a smaller size
  // inside a buffer a larger run migrated is not the same measurement.
  bool resizable() const { return kind() != MemoryKind::Managed; }

  void fill_pattern(std::uint64_t seed);
  void poison();
  // Against the pattern, on the owning GPU where it can see the memory (fast), else on the CPU.
  Verification check_pattern(std::uint64_t seed) const;

  // The address copies and kernels use (host data pointer; UVA makes it valid everywhere it is
  // mapped). For kernels on `gpu`, throws Skip when that GPU cannot dereference this memory.
  void* pointer() const { return buffer_.data(); }
  void* kernel_pointer(int gpu) const;
  const BufferSpec& where() const { return where_; }
  MemoryKind kind() const { return buffer_.kind(); }
  std::size_t bytes() const { return used_; }

 private:
  bool cpu_first() const;
  BufferSpec where_;
  GpuBuffer buffer_;
  std::size_t used_;
};

// Throws Skip if the host side of the run cannot hold `bytes` more (pinned/pageable/registered
// buffers come out of host memory, which other processes share).
void require_host_bytes(std::uint64_t bytes);

}  // namespace commatlas::cuda
