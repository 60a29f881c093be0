// The MPI transports' shared half: the point-to-point protocols as the OSU micro-benchmarks run
// them (MPI_Send/MPI_Recv round trips, windows of 64 MPI_Isend with an ack, windows each way) and
// a pattern's messages as non-blocking sends and receives, over MessageBuffers of any memory kind
// (host, staged GPU, GPU-aware), timed on the host clock. The MPI calls are the same whatever the
// memory; staged buffers copy each message through host memory inside the timed operation.
// Implementations: host (mpi_transport_mpi.cpp), staged and GPU-aware (mpi_gpu_transport_mpi.cu).
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "backends/mpi/message_buffers.h"
#include "backends/mpi/mpi_comm.h"
#include "transport/transport.h"

namespace commatlas {

// Messages in flight per window (osu_bw's default window size), at every size. The count is part
// of the figure, not only of its cost: windows of 4 at 16 MiB read host and staged bibw 0.67-0.69x
// of 64 on 2x H100, each window ending with one direction alone
// (results/nvidia-h100-x2/figures-that-hold-20).
inline constexpr int kMessageWindow = 64;

class MpiTransport : public Transport {
 public:
  explicit MpiTransport(std::unique_ptr<mpi::MessageBuffers> buffers);

  std::vector<int> local_ends() const override;
  int window_messages() const override { return kMessageWindow; }
  ProtocolWords words(Protocol protocol) const override;

  void fill_send(int end, std::size_t bytes, std::uint64_t seed) override;
  void poison_recv(int end, std::size_t bytes) override;
  std::size_t check_recv(int end, std::size_t bytes, std::uint64_t seed) override;
  bool resize(std::size_t bytes) override;

  void transfer(int from, int to, std::size_t bytes) override;
  void window(int from, int to, std::size_t bytes) override;
  void window_both(int a, int b, std::size_t bytes) override;
  void time(Protocol protocol, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
            const std::function<void()>& op) override;

  void* send_home() override { return buffers_->send_home(); }
  void* recv_home() override { return buffers_->recv_home(); }
  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override;
  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override;
  void allreduce(const float* send, float* recv, std::size_t count) override;

 protected:
  // Posts every receive, then every send, and waits for all: MPI sees `send_base`/`recv_base`.
  void mpi_exchange(const void* send_base, void* recv_base, const std::vector<PeerMessage>& sends,
                    const std::vector<PeerMessage>& recvs);
  mpi::MessageBuffers& buffers() { return *buffers_; }
  mpi::MpiComm comm_;
  std::vector<MPI_Request> requests_;

 private:
  void send_message(int to, int count);
  void receive_message(int from, int count);
  void post_sends(MPI_Request* requests, int to, int count);
  void post_receives(MPI_Request* requests, int from, int count);
  void wait(MPI_Request* requests, int n);
  void unstage_receives();

  std::unique_ptr<mpi::MessageBuffers> buffers_;
  bool stages_ = false;  // staged buffers: each message is copied through host memory, timed
  void* send_ = nullptr;  // this operation's buffers, asked once per operation
  void* recv_ = nullptr;
  int ack_ = 0;
};

// A pattern step's messages over MPI on `comm`: every receive posted, then every send, then one
// MPI_Waitall (`requests` is scratch). MPI sees `send_base`/`recv_base` at each message's offset.
void mpi_exchange(MPI_Comm comm, std::vector<MPI_Request>& requests, const void* send_base, void* recv_base,
                  const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs);
// One 8-byte count to each send peer and from each receive peer, as the application's own host
// integers, whatever moves the payload.
void mpi_exchange_counts(MPI_Comm comm, std::vector<MPI_Request>& requests, const std::vector<PeerMessage>& sends,
                         const std::vector<std::uint64_t>& send_counts, const std::vector<PeerMessage>& recvs,
                         std::vector<std::uint64_t>& recv_counts);

// Host-memory halo faces (CPU loops): the host transport, and the reference the GPU kernels match.
void pack_faces_host(const HaloGeometry& g, const double* grid, double* send);
void unpack_faces_host(const HaloGeometry& g, const double* recv, double* grid);

// Skip text for a message MPI_BYTE with an int count cannot carry, or nullopt.
std::optional<std::string> mpi_refuse_size(std::uint64_t bytes);

}  // namespace commatlas
