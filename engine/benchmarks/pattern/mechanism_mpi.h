// The MPI side shared by the MPI mechanisms (host buffers, staged, GPU-aware, and the CUDA IPC
// mechanism's handshakes): non-blocking sends and receives of a step on a communicator of the
// pattern's own, counts over host memory, and MPI_Allreduce.
#pragma once

#include <mpi.h>

#include <vector>

#include "backends/mpi/mpi_comm.h"
#include "benchmarks/pattern/mechanism.h"

namespace commatlas {

class MpiPatternMechanism : public PatternMechanism {
 public:
  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override;
  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override;
  void allreduce(const float* send, float* recv, std::size_t count) override;

 protected:
  // Posts every receive, then every send, and waits for all: MPI sees `send_base`/`recv_base`.
  void mpi_exchange(const void* send_base, void* recv_base, const std::vector<PeerMessage>& sends,
                    const std::vector<PeerMessage>& recvs);
  MpiComm comm_;
  std::vector<MPI_Request> requests_;
};

// Host-memory halo faces (CPU loops): the host mechanism, and the reference the GPU kernels match.
void pack_faces_host(const HaloGeometry& g, const double* grid, double* send);
void unpack_faces_host(const HaloGeometry& g, const double* recv, double* grid);

}  // namespace commatlas
