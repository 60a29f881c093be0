#include "backends/cuda/chase_chain.h"

#include "backends/cuda/kernels.h"

namespace commatlas::cuda {
namespace {

std::size_t links_for(std::size_t bytes) {
  const std::size_t n = bytes / ChaseChain::kStride;
  if (n < 2)
    throw Skip("a pointer chase needs at least two " + std::to_string(ChaseChain::kStride) + "-byte links (" +
               std::to_string(2 * ChaseChain::kStride) + " B)");
  return n;
}

}  // namespace

ChaseChain::ChaseChain(Location where, int gpu, std::size_t bytes, std::uint64_t seed)
    : cycle_(links_for(bytes), seed), buffer_(buffer_of(where, gpu), cycle_.size() * kStride) {
  const BufferSpec& e = buffer_.where();
  if (e.allocator == Allocator::Device) {
    // Only the link table crosses PCIe; the owning GPU spreads it over the chain.
    GpuBuffer table(MemoryKind::Device, cycle_.size() * sizeof(std::uint32_t), e.gpu);
    DeviceScope scope(e.gpu);
    Stream s(e.gpu);
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(table.data(), cycle_.next_table().data(), table.bytes(), cudaMemcpyHostToDevice,
                                        s.get()));
    launch_write_chain(static_cast<unsigned char*>(buffer_.pointer()), table.as<std::uint32_t>(), cycle_.size(), kStride,
                       s.get());
    s.synchronize();
  } else {
    auto* base = static_cast<unsigned char*>(buffer_.pointer());
    for (std::size_t i = 0; i < cycle_.size(); ++i)
      *reinterpret_cast<std::uint64_t*>(base + i * kStride) = static_cast<std::uint64_t>(cycle_.next(i)) * kStride;
    place(buffer_, where, gpu);
  }
}

const unsigned char* ChaseChain::host_base() const {
  if (buffer_.kind() == MemoryKind::Device || buffer_.kind() == MemoryKind::DevicePool)
    throw Skip("the CPU cannot load from device memory");
  return static_cast<const unsigned char*>(buffer_.pointer());
}

Verification ChaseChain::check(std::uint64_t end_offset, std::uint64_t steps) const {
  Verification v;
  const std::uint64_t expected = static_cast<std::uint64_t>(cycle_.after(steps)) * kStride;
  if (end_offset != expected) {
    v.detail = "the chase ended at offset " + std::to_string(end_offset) + ", the CPU's replay of " +
               std::to_string(steps) + " steps at " + std::to_string(expected);
    return v;
  }
  v.ok = true;
  v.bytes_checked = steps * sizeof(std::uint64_t);
  return v;
}

}  // namespace commatlas::cuda
