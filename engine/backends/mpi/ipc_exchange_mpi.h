// CUDA IPC between MPI ranks: export a device buffer, trade handles once over MPI (setup,
// never timed), and map what the peer exported.
#pragma once

#include "backends/cuda/gpu_runtime.h"

#include <vector>

#include "core/group.h"

namespace commatlas::mpi {

// A peer's buffer mapped into this process (cudaIpcOpenMemHandle), unmapped on destruction.
class PeerMapping {
 public:
  PeerMapping(const cudaIpcMemHandle_t& handle, int device);
  ~PeerMapping();
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;
  void* data() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  int device_ = 0;
};

// Every rank's handles for `buffers` (device pointers of this rank, or none on ranks that take no
// part), gathered over MPI_COMM_WORLD: result[rank][i] is that rank's handle of its buffer i.
std::vector<std::vector<cudaIpcMemHandle_t>> exchange_ipc_handles(const std::vector<void*>& buffers,
                                                                  std::size_t buffers_per_rank);

}  // namespace commatlas::mpi
