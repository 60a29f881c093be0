// MPI on host buffers: the pattern as an application without GPUs (or before porting) runs it.
#include "benchmarks/pattern/mechanism_mpi.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/mpi/mpi_check.h"
#include "backends/mpi/point_to_point.h"
#include "core/error.h"

namespace commatlas {

void MpiPatternMechanism::mpi_exchange(const void* send_base, void* recv_base, const std::vector<PeerMessage>& sends,
                                       const std::vector<PeerMessage>& recvs) {
  requests_.assign(sends.size() + recvs.size(), MPI_REQUEST_NULL);
  std::size_t r = 0;
  for (const PeerMessage& m : recvs) {
    if (m.bytes > static_cast<std::size_t>(INT_MAX)) throw Skip("a message is larger than an MPI int count");
    COMMATLAS_MPI(MPI_Irecv(static_cast<unsigned char*>(recv_base) + m.offset, static_cast<int>(m.bytes), MPI_BYTE,
                            m.peer, m.tag, comm_.get(), &requests_[r++]));
  }
  for (const PeerMessage& m : sends)
    COMMATLAS_MPI(MPI_Isend(static_cast<const unsigned char*>(send_base) + m.offset, static_cast<int>(m.bytes), MPI_BYTE,
                            m.peer, m.tag, comm_.get(), &requests_[r++]));
  COMMATLAS_MPI(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
}

void MpiPatternMechanism::exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) {
  mpi_exchange(send_home(), recv_home(), sends, recvs);
}

void MpiPatternMechanism::exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                                          const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) {
  // Counts travel as the application's own host integers, whatever moves the payload.
  std::vector<PeerMessage> s = sends, r = recvs;
  for (std::size_t i = 0; i < s.size(); ++i) s[i].offset = i * 8, s[i].bytes = 8;
  for (std::size_t i = 0; i < r.size(); ++i) r[i].offset = i * 8, r[i].bytes = 8;
  mpi_exchange(send_counts.data(), recv_counts.data(), s, r);
}

void MpiPatternMechanism::allreduce(const float* send, float* recv, std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) throw Skip("a bucket holds more floats than an MPI int count");
  COMMATLAS_MPI(MPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_.get()));
}

void pack_faces_host(const HaloGeometry& g, const double* grid, double* send) {
  const std::int64_t cells = g.face_cells();
  for (int d = 0; d < g.faces(); ++d)
    for (std::int64_t f = 0; f < cells; ++f) send[d * cells + f] = grid[g.face_cell(d, f, false)];
}

void unpack_faces_host(const HaloGeometry& g, const double* recv, double* grid) {
  const std::int64_t cells = g.face_cells();
  for (int d = 0; d < g.faces(); ++d)
    for (std::int64_t f = 0; f < cells; ++f) grid[g.face_cell(d, f, true)] = recv[d * cells + f];
}

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class HostMpiMechanism final : public MpiPatternMechanism {
 public:
  HostMpiMechanism(std::size_t send_bytes, std::size_t recv_bytes)
      : send_(allocate(send_bytes)), recv_(allocate(recv_bytes)) {}
  std::string describe() const override { return "host buffers (malloc, page-aligned)"; }
  void* send_home() override { return send_; }
  void* recv_home() override { return recv_; }
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes == 0 ? 4096 : bytes) != 0) throw std::bad_alloc();
    std::memset(p, 0, bytes);  // first touch outside the timed loop
    owned_.emplace_back(p);
    return p;
  }
  void upload(void* dst, const void* host, std::size_t bytes) override { std::memcpy(dst, host, bytes); }
  void download(void* host, const void* src, std::size_t bytes) override { std::memcpy(host, src, bytes); }
  void fill(void* dst, unsigned char byte, std::size_t bytes) override { std::memset(dst, byte, bytes); }
  void pack(const HaloGeometry& g, const double* grid, void* send) override {
    pack_faces_host(g, grid, static_cast<double*>(send));
  }
  void unpack(const HaloGeometry& g, const void* recv, double* grid) override {
    unpack_faces_host(g, static_cast<const double*>(recv), grid);
  }

 private:
  std::vector<std::unique_ptr<void, FreeDeleter>> owned_;
  void* send_;
  void* recv_;
};

const bool registered = register_pattern_benchmarks(MechanismSpec{
    Mechanism::MpiHost, "mpi", "mpi", false, true,
    [](const Context& ctx) { return mpi_run_unavailable(ctx); }, nullptr,
    [](Context&, std::size_t send_bytes, std::size_t recv_bytes) -> std::unique_ptr<PatternMechanism> {
      return std::make_unique<HostMpiMechanism>(send_bytes, recv_bytes);
    }});

}  // namespace
}  // namespace commatlas
