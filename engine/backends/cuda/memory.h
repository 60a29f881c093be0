// GPU-runtime resources as RAII values: device scope, streams, events, and buffers of every
// allocator the methodology compares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "backends/cuda/gpu_runtime.h"
#include "core/movement.h"

namespace commatlas::cuda {

// Which GPU-runtime call makes a buffer. Its names are the allocator table's (core/movement.h):
// a MemoryKind converts to and from an Allocator, and has no words of its own.
enum class MemoryKind {
  Device,      // cudaMalloc
  DevicePool,  // cudaMallocAsync from the device's default memory pool
  Pinned,      // cudaHostAlloc (portable, mapped): page-locked host memory
  Registered,  // malloc + cudaHostRegister (portable, mapped)
  Pageable,    // plain malloc
  Managed,     // cudaMallocManaged
};

Allocator allocator_of(MemoryKind kind);
// Throws UsageError for an allocator the GPU runtime does not make (malloc: the host MPI
// patterns' word for what the GPU benchmarks call pageable).
MemoryKind memory_kind_of(Allocator allocator);
inline std::string to_string(MemoryKind kind) { return to_string(allocator_of(kind)); }
// A param's allocator name; throws UsageError.
inline MemoryKind memory_kind_from_string(const std::string& name) { return memory_kind_of(parse_allocator(name)); }
bool is_host_memory(MemoryKind kind);  // Pinned, Registered, Pageable: the table's host allocators

// Makes `device` current for the scope and restores the previous device after. Nothing in the
// engine changes a thread's current device for longer than a scope: an MPI library takes the
// current device as the calling rank's GPU (Open MPI's smcuda announces it in its CUDA IPC
// handshake), so a device left behind by one benchmark decides how fast the next one's messages go.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  // For destructors and other places that must not throw: a device that cannot be set is left.
  struct NoThrow {};
  DeviceScope(int device, NoThrow) noexcept;
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

class Stream {
 public:
  explicit Stream(int device);  // non-blocking: never serialises against the legacy default stream
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&&) = delete;
  Stream(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
};

class Event {
 public:
  explicit Event(int device, unsigned flags = cudaEventDefault);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// The size to allocate for a device buffer another process maps with CUDA IPC: whole 2 MiB blocks.
// cudaMalloc may sub-allocate small buffers from one larger block, and CUDA IPC shares the whole
// block; a process that opens the handles of two buffers of one block gets "resource already mapped"
// for the second (seen for a pattern's receive buffer and its flags once NVSHMEM's own allocations
// had moved cudaMalloc's placement). A block of its own per exported buffer avoids it, as the CUDA
// programming guide advises (share only allocations of a 2 MiB-aligned size).
inline constexpr std::size_t kIpcBlockBytes = std::size_t{2} << 20;
inline constexpr std::size_t ipc_block_bytes(std::size_t bytes) {
  return bytes <= kIpcBlockBytes ? kIpcBlockBytes : (bytes + kIpcBlockBytes - 1) / kIpcBlockBytes * kIpcBlockBytes;
}

// One buffer of `bytes` from `kind`; `device` is the owning GPU for device kinds and the GPU
// whose context allocates host kinds. Throws Skip when the memory is not there.
class GpuBuffer {
 public:
  GpuBuffer(MemoryKind kind, std::size_t bytes, int device);
  ~GpuBuffer();
  GpuBuffer(GpuBuffer&& other) noexcept;
  GpuBuffer& operator=(GpuBuffer&&) = delete;
  GpuBuffer(const GpuBuffer&) = delete;

  void* data() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  int device() const { return device_; }
  // The pointer a kernel on the owning GPU uses (the mapped alias for host kinds).
  void* device_view() const;

 private:
  void release() noexcept;
  MemoryKind kind_;
  std::size_t bytes_ = 0;
  int device_ = 0;
  int node_ = -1;  // Pinned: the NUMA node it was asked for on (its key in the reuse pool)
  void* ptr_ = nullptr;
};

int gpu_count();  // 0 when no GPU or no driver (never throws)
// Tests only: gpu_count() answers `n` (nullopt: ask the driver again), so variant lists of
// machines with GPUs can be checked on one without (engine/tests/movement_contract_test.cpp).
void override_gpu_count_for_tests(std::optional<int> n);

}  // namespace commatlas::cuda
