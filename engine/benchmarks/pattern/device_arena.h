// GPU memory and the application's GPU work shared by the GPU mechanisms (staged and GPU-aware
// MPI, CUDA IPC, NCCL): buffers on the rank's GPU, the halo pack/unpack kernels, host transfers
// outside the timed loop. Each call that runs GPU work returns when it is done.
#pragma once

#include <memory>
#include <vector>

#include "backends/cuda/memory.h"
#include "benchmarks/pattern/geometry.h"

namespace commatlas {

class DeviceArena {
 public:
  DeviceArena(int device, std::size_t send_bytes, std::size_t recv_bytes);
  int device() const { return device_; }
  const Stream& stream() const { return stream_; }
  void* send() const { return send_.data(); }
  void* recv() const { return recv_.data(); }
  void* allocate(std::size_t bytes, MemoryKind kind = MemoryKind::Device);
  void upload(void* dst, const void* host, std::size_t bytes);
  void download(void* host, const void* src, std::size_t bytes);
  void fill(void* dst, unsigned char byte, std::size_t bytes);
  // Enqueues on stream() and waits: `bytes` from `src` to `dst` (any kinds: unified addressing).
  void copy(void* dst, const void* src, std::size_t bytes);
  void pack(const HaloGeometry& g, const double* grid, void* send);
  void unpack(const HaloGeometry& g, const void* recv, double* grid);

 private:
  int device_;
  Stream stream_;
  GpuBuffer send_, recv_;
  std::vector<std::unique_ptr<GpuBuffer>> owned_;
};

}  // namespace commatlas
