#include "transport/device_arena.h"

#include "backends/cuda/kernels.h"
#include "core/error.h"

namespace commatlas {
namespace {

// blockIdx.y is the face: one launch packs (or unpacks) every face.
__global__ void pack_faces(HaloGeometry g, const double* grid, double* send) {
  const std::int64_t cells = g.face_cells();
  const int face = blockIdx.y;
  for (std::int64_t f = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; f < cells;
       f += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    send[face * cells + f] = grid[g.face_cell(face, f, false)];
}

__global__ void unpack_faces(HaloGeometry g, const double* recv, double* grid) {
  const std::int64_t cells = g.face_cells();
  const int face = blockIdx.y;
  for (std::int64_t f = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; f < cells;
       f += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    grid[g.face_cell(face, f, true)] = recv[face * cells + f];
}

dim3 face_grid(const HaloGeometry& g) {
  const std::int64_t blocks = (g.face_cells() + 255) / 256;
  return dim3(static_cast<unsigned>(blocks < 1024 ? blocks : 1024), static_cast<unsigned>(g.faces()));
}

}  // namespace

DeviceArena::DeviceArena(int device, std::size_t send_bytes, std::size_t recv_bytes)
    : device_(device),
      stream_(device),
      send_(cuda::MemoryKind::Device, send_bytes ? send_bytes : 1, device),
      // Whole IPC blocks: the CUDA IPC transports export the receive buffer to their peers.
      recv_(cuda::MemoryKind::Device, cuda::ipc_block_bytes(recv_bytes), device) {}

void* DeviceArena::allocate(std::size_t bytes, cuda::MemoryKind kind) {
  owned_.push_back(std::make_unique<cuda::GpuBuffer>(kind, bytes ? bytes : 1, device_));
  return owned_.back()->data();
}

void DeviceArena::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  cuda::DeviceScope scope(device_);
  COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
  stream_.synchronize();
}

void DeviceArena::upload(void* dst, const void* host, std::size_t bytes) { copy(dst, host, bytes); }
void DeviceArena::download(void* host, const void* src, std::size_t bytes) { copy(host, src, bytes); }

void DeviceArena::fill(void* dst, unsigned char byte, std::size_t bytes) {
  cuda::DeviceScope scope(device_);
  COMMATLAS_GPU_CHECK(cudaMemsetAsync(dst, byte, bytes, stream_.get()));
  stream_.synchronize();
}

void DeviceArena::pack(const HaloGeometry& g, const double* grid, void* send) {
  cuda::DeviceScope scope(device_);
  pack_faces<<<face_grid(g), 256, 0, stream_.get()>>>(g, grid, static_cast<double*>(send));
  COMMATLAS_GPU_CHECK_LAUNCH();
  stream_.synchronize();
}

void DeviceArena::unpack(const HaloGeometry& g, const void* recv, double* grid) {
  cuda::DeviceScope scope(device_);
  unpack_faces<<<face_grid(g), 256, 0, stream_.get()>>>(g, static_cast<const double*>(recv), grid);
  COMMATLAS_GPU_CHECK_LAUNCH();
  stream_.synchronize();
}

}  // namespace commatlas
