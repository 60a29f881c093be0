// GPU memory and the application's GPU work shared by the GPU mechanisms (staged and GPU-aware
// MPI, CUDA IPC, NCCL): buffers on the rank's GPU, the halo pack/unpack kernels, host transfers
// outside the timed loop. Each call that runs GPU work returns when it is done.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/memory.h"
#include "transport/geometry.h"

namespace commatlas {

class DeviceArena {
 public:
  DeviceArena(int device, std::size_t send_bytes, std::size_t recv_bytes);
  int device() const { return device_; }
  const cuda::Stream& stream() const { return stream_; }
  void* send() const { return send_.data(); }
  void* recv() const { return recv_.data(); }
  void* allocate(std::size_t bytes, cuda::MemoryKind kind = cuda::MemoryKind::Device);
  void upload(void* dst, const void* host, std::size_t bytes);
  void download(void* host, const void* src, std::size_t bytes);
  void fill(void* dst, unsigned char byte, std::size_t bytes);
  // Enqueues on stream() and waits: `bytes` from `src` to `dst` (any kinds: unified addressing).
  void copy(void* dst, const void* src, std::size_t bytes);
  void pack(const HaloGeometry& g, const double* grid, void* send);
  void unpack(const HaloGeometry& g, const void* recv, double* grid);

 private:
  int device_;
  cuda::Stream stream_;
  cuda::GpuBuffer send_, recv_;
  std::vector<std::unique_ptr<cuda::GpuBuffer>> owned_;
};

// A transport whose pattern memory lives on one GPU: the memory calls every such transport answers
// from its arena, written once here (the buffers themselves may be the arena's or the transport's).
template <typename Base>
class OnDeviceArena : public Base {
 public:
  template <typename... BaseArgs>
  OnDeviceArena(int device, std::size_t send_bytes, std::size_t recv_bytes, BaseArgs&&... base_args)
      : Base(std::forward<BaseArgs>(base_args)...), arena_(device, send_bytes, recv_bytes) {}
  void* allocate(std::size_t bytes) override { return arena_.allocate(bytes); }
  void upload(void* dst, const void* host, std::size_t bytes) override { arena_.upload(dst, host, bytes); }
  void download(void* host, const void* src, std::size_t bytes) override { arena_.download(host, src, bytes); }
  void fill(void* dst, unsigned char byte, std::size_t bytes) override { arena_.fill(dst, byte, bytes); }
  void pack(const HaloGeometry& g, const double* grid, void* send) override { arena_.pack(g, grid, send); }
  void unpack(const HaloGeometry& g, const void* recv, double* grid) override { arena_.unpack(g, recv, grid); }

 protected:
  DeviceArena arena_;
};

}  // namespace commatlas
