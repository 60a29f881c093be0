#include "backends/mpi/ipc_exchange_mpi.h"

#include <mpi.h>

#include "backends/cuda/memory.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas::mpi {

PeerMapping::PeerMapping(const cudaIpcMemHandle_t& handle, int device) : device_(device) {
  cuda::DeviceScope scope(device);
  // Lazy peer access: the mapping enables NVLink/PCIe peer access to the owner's GPU itself.
  COMMATLAS_GPU_CHECK(cudaIpcOpenMemHandle(&ptr_, handle, cudaIpcMemLazyEnablePeerAccess));
}

PeerMapping::~PeerMapping() {
  if (!ptr_) return;
  cuda::DeviceScope scope(device_, cuda::DeviceScope::NoThrow{});
  cudaIpcCloseMemHandle(ptr_);
}

std::vector<std::vector<cudaIpcMemHandle_t>> exchange_ipc_handles(const std::vector<void*>& buffers,
                                                                  std::size_t buffers_per_rank) {
  std::vector<cudaIpcMemHandle_t> mine(buffers_per_rank);
  for (std::size_t i = 0; i < buffers.size() && i < buffers_per_rank; ++i)
    COMMATLAS_GPU_CHECK(cudaIpcGetMemHandle(&mine[i], buffers[i]));
  int ranks = 1;
  COMMATLAS_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  const int bytes = static_cast<int>(buffers_per_rank * sizeof(cudaIpcMemHandle_t));
  std::vector<cudaIpcMemHandle_t> all(buffers_per_rank * static_cast<std::size_t>(ranks));
  COMMATLAS_MPI(MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, MPI_COMM_WORLD));
  std::vector<std::vector<cudaIpcMemHandle_t>> out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    out[r].assign(all.begin() + r * buffers_per_rank, all.begin() + (r + 1) * buffers_per_rank);
  return out;
}

}  // namespace commatlas::mpi
