#include "backends/cuda/copy_buffers.h"

#include <cstring>
#include <stdexcept>
#include <unistd.h>

#include "backends/cuda/device_pattern.h"
#include "backends/host/first_touch.h"
#include "backends/cuda/gpu_access.h"
#include "core/pattern.h"

namespace commatlas::cuda {

PlacedBuffer::PlacedBuffer(const BufferSpec& where, std::size_t bytes)
    : where_(where), buffer_(memory_kind_of(where.allocator), bytes, where.gpu), used_(bytes) {
  if (where_.hint == kHostPreferred) advise_host_preferred(buffer_.data(), bytes, where_.gpu);
}

void PlacedBuffer::resize(std::size_t bytes) {
  if (bytes > buffer_.bytes()) throw std::logic_error("PlacedBuffer::resize past the allocated size");
  used_ = bytes;
}

bool PlacedBuffer::cpu_first() const {
  // Plain host memory is always CPU-touched; device memory never can be.
  if (is_host_memory(kind())) return true;
  if (kind() == MemoryKind::Managed) return where_.first_touch == "cpu";
  return false;
}

void PlacedBuffer::fill_pattern(std::uint64_t seed) {
  if (cpu_first()) {
    // The first write of fresh pageable (or CPU-touched managed) pages is their first touch: from
    // this thread's NUMA node, in parallel above a size (backends/host/first_touch.h).
    auto* data = buffer_.data();
    host::touch_from_this_node(bytes(), [data, seed](std::size_t begin, std::size_t end) {
      commatlas::fill_pattern_part(data, begin, end, seed);
    });
    return;
  }
  DeviceScope scope(where_.gpu);
  Stream s(where_.gpu);
  fill_pattern_on_device(buffer_.device_view(), bytes(), seed, s.get());
  s.synchronize();
}

void PlacedBuffer::poison() {
  // Pinned memory is mapped and never migrates, so who writes it does not matter: the GPU's
  // memset crosses the host link several times faster than a CPU thread's (this runs before every
  // timed batch; the MPI staging buffers are poisoned the same way).
  if (cpu_first() && kind() != MemoryKind::Pinned) {
    std::memset(buffer_.data(), 0xA5, bytes());
    return;
  }
  DeviceScope scope(where_.gpu);
  Stream s(where_.gpu);
  poison_on_device(buffer_.device_view(), bytes(), s.get());
  s.synchronize();
}

Verification PlacedBuffer::check_pattern(std::uint64_t seed) const {
  Verification v;
  std::size_t bad = 0;
  if (kind() == MemoryKind::Pageable) {
    bad = find_pattern_mismatch(buffer_.data(), bytes(), seed);
  } else {
    DeviceScope scope(where_.gpu);
    Stream s(where_.gpu);
    bad = find_mismatch_on_device(buffer_.device_view(), bytes(), seed, s.get());
  }
  if (bad < bytes()) {
    v.detail = "byte " + std::to_string(bad) + " of " + std::to_string(bytes()) + " (" + to_string(where_.allocator) +
               " on GPU " + std::to_string(where_.gpu) + ") differs from the pattern";
    return v;
  }
  v.ok = true;
  v.bytes_checked = bytes();
  return v;
}

void* PlacedBuffer::kernel_pointer(int gpu) const {
  require_kernel_access(kind(), gpu);
  if (kind() == MemoryKind::Pageable) return buffer_.data();
  if (!is_host_memory(kind()) && kind() != MemoryKind::Managed && where_.gpu != gpu) enable_peer_access(gpu, where_.gpu);
  return buffer_.device_view();
}

void require_host_bytes(std::uint64_t bytes) {
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: let the allocation decide
  const std::uint64_t available = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  // Leave half of what is free to everything else on the node.
  if (bytes > available / 2)
    throw Skip("needs " + std::to_string(bytes) + " bytes of host memory, " + std::to_string(available) +
               " available (kept under half of it)");
}

}  // namespace commatlas::cuda
