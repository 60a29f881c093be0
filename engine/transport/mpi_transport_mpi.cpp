// MPI on host buffers: the transport of an application without GPUs (or before porting), and the
// protocols' and patterns' MPI calls every MPI transport shares.
#include "transport/mpi_transport_mpi.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#include "backends/mpi/mpi_check.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/pattern.h"
#include "core/sizes.h"
#include "transport/geometry.h"

namespace commatlas {

constexpr int kPayloadTag = 1;
constexpr int kAckTag = 2;

MpiTransport::MpiTransport(std::unique_ptr<mpi::MessageBuffers> buffers)
    : buffers_(std::move(buffers)), stages_(buffers_->memory() == mpi::MessageMemory::StagedDevice) {
  requests_.resize(2 * kMessageWindow, MPI_REQUEST_NULL);
}

std::vector<int> MpiTransport::local_ends() const {
  if (comm_.rank() == kOriginEnd || comm_.rank() == kPeerEnd) return {comm_.rank()};
  return {};
}

ProtocolWords MpiTransport::words(Protocol protocol) const {
  const std::string where = buffers_->describe();
  switch (protocol) {
    case Protocol::PingPong:
      return {"host steady_clock on rank 0 around a batch of round trips; per-op time halved",
              "half a round trip (osu_latency): rank 0 MPI_Send + MPI_Recv of the reply, rank 1 MPI_Recv + MPI_Send, " +
                  where};
    case Protocol::Bandwidth:
      return {"host steady_clock on rank 0 around a batch of windows",
              "one window (osu_bw): " + std::to_string(kMessageWindow) + " MPI_Isend 0->1 + MPI_Waitall, then a 4-byte ack 1->0, " +
                  where};
    case Protocol::Bibw:
      return {"host steady_clock on rank 0 around a batch of windows",
              "one window each way at once (osu_bibw): " + std::to_string(kMessageWindow) + " MPI_Irecv + " +
                  std::to_string(kMessageWindow) + " MPI_Isend per rank + MPI_Waitall, " + where};
  }
  return {};
}

void MpiTransport::fill_send(int, std::size_t bytes, std::uint64_t seed) {
  fill_pattern(buffers_->send_view(), bytes, seed);
  buffers_->publish_send();
}

// Staged buffers poison their host staging copy too: a receive that did not happen would
// otherwise stage the warm-up's bytes into the device buffer.
void MpiTransport::poison_recv(int, std::size_t) { buffers_->poison_recv(); }

std::size_t MpiTransport::check_recv(int, std::size_t bytes, std::uint64_t seed) {
  return find_pattern_mismatch(buffers_->fetch_recv(), bytes, seed);
}

// A rank past the two ends was made with empty buffers and stays empty; it still answers like the
// others (managed memory refuses on every rank).
bool MpiTransport::resize(std::size_t bytes) {
  const bool empty = buffers_->send_bytes() == 0 && buffers_->recv_bytes() == 0;
  return buffers_->resize(empty ? mpi::MessageSizes{0, 0} : mpi::MessageSizes{bytes, bytes});
}

void MpiTransport::time(Protocol, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
                        const std::function<void()>& op) {
  time_host_samples(samples, ops, seconds, op);
}

// Where MPI reads and writes is asked once per message or window: the window loops below then
// make no call OSU's loops do not.
void MpiTransport::send_message(int to, int count) {
  if (stages_) buffers_->stage_before_send();
  COMMATLAS_MPI(MPI_Send(buffers_->send_data(), count, MPI_BYTE, to, kPayloadTag, comm_.get()));
}

void MpiTransport::receive_message(int from, int count) {
  COMMATLAS_MPI(MPI_Recv(buffers_->recv_data(), count, MPI_BYTE, from, kPayloadTag, comm_.get(), MPI_STATUS_IGNORE));
  if (stages_) buffers_->stage_after_receive();
}

void MpiTransport::transfer(int from, int to, std::size_t bytes) {
  const int me = comm_.rank();
  if (me == from)
    send_message(to, static_cast<int>(bytes));
  else if (me == to)
    receive_message(from, static_cast<int>(bytes));
}

// All messages of a window share one buffer, as in osu_bw: the footprint stays one message
// (64 MiB messages would need 4 GiB otherwise) and every message carries the same bytes.
void MpiTransport::post_sends(MPI_Request* requests, int to, int count) {
  for (int w = 0; w < kMessageWindow; ++w) {
    if (stages_) buffers_->stage_before_send();
    COMMATLAS_MPI(MPI_Isend(send_, count, MPI_BYTE, to, kPayloadTag, comm_.get(), &requests[w]));
  }
}

void MpiTransport::post_receives(MPI_Request* requests, int from, int count) {
  for (int w = 0; w < kMessageWindow; ++w)
    COMMATLAS_MPI(MPI_Irecv(recv_, count, MPI_BYTE, from, kPayloadTag, comm_.get(), &requests[w]));
}

void MpiTransport::wait(MPI_Request* requests, int n) { COMMATLAS_MPI(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE)); }

void MpiTransport::unstage_receives() {
  if (!stages_) return;
  for (int w = 0; w < kMessageWindow; ++w) buffers_->stage_after_receive();
}

void MpiTransport::window(int from, int to, std::size_t bytes) {
  const int me = comm_.rank(), count = static_cast<int>(bytes);
  send_ = buffers_->send_data();
  recv_ = buffers_->recv_data();
  if (me == from) {
    post_sends(requests_.data(), to, count);
    wait(requests_.data(), kMessageWindow);
    // The ack: the window is done only when the receiver has every message.
    COMMATLAS_MPI(MPI_Recv(&ack_, 1, MPI_INT, to, kAckTag, comm_.get(), MPI_STATUS_IGNORE));
  } else if (me == to) {
    post_receives(requests_.data(), from, count);
    wait(requests_.data(), kMessageWindow);
    unstage_receives();
    COMMATLAS_MPI(MPI_Send(&ack_, 1, MPI_INT, from, kAckTag, comm_.get()));
  }
}

// As osu_bibw: the sends' MPI_Waitall, then the receives'.
void MpiTransport::window_both(int a, int b, std::size_t bytes) {
  const int me = comm_.rank(), count = static_cast<int>(bytes);
  if (me != a && me != b) return;
  const int peer = me == a ? b : a;
  send_ = buffers_->send_data();
  recv_ = buffers_->recv_data();
  post_receives(requests_.data(), peer, count);
  post_sends(requests_.data() + kMessageWindow, peer, count);
  wait(requests_.data() + kMessageWindow, kMessageWindow);
  wait(requests_.data(), kMessageWindow);
  unstage_receives();
}

void mpi_exchange(MPI_Comm comm, std::vector<MPI_Request>& requests, const void* send_base, void* recv_base,
                  const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) {
  requests.assign(sends.size() + recvs.size(), MPI_REQUEST_NULL);
  std::size_t r = 0;
  for (const PeerMessage& m : recvs) {
    if (m.bytes > static_cast<std::size_t>(INT_MAX)) throw Skip("a message is larger than an MPI int count");
    COMMATLAS_MPI(MPI_Irecv(static_cast<unsigned char*>(recv_base) + m.offset, static_cast<int>(m.bytes), MPI_BYTE,
                            m.peer, m.tag, comm, &requests[r++]));
  }
  for (const PeerMessage& m : sends)
    COMMATLAS_MPI(MPI_Isend(static_cast<const unsigned char*>(send_base) + m.offset, static_cast<int>(m.bytes), MPI_BYTE,
                            m.peer, m.tag, comm, &requests[r++]));
  COMMATLAS_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

void mpi_exchange_counts(MPI_Comm comm, std::vector<MPI_Request>& requests, const std::vector<PeerMessage>& sends,
                         const std::vector<std::uint64_t>& send_counts, const std::vector<PeerMessage>& recvs,
                         std::vector<std::uint64_t>& recv_counts) {
  std::vector<PeerMessage> s = sends, r = recvs;
  for (std::size_t i = 0; i < s.size(); ++i) s[i].offset = i * 8, s[i].bytes = 8;
  for (std::size_t i = 0; i < r.size(); ++i) r[i].offset = i * 8, r[i].bytes = 8;
  mpi_exchange(comm, requests, send_counts.data(), recv_counts.data(), s, r);
}

void MpiTransport::mpi_exchange(const void* send_base, void* recv_base, const std::vector<PeerMessage>& sends,
                                const std::vector<PeerMessage>& recvs) {
  commatlas::mpi_exchange(comm_.get(), requests_, send_base, recv_base, sends, recvs);
}

void MpiTransport::exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) {
  mpi_exchange(buffers_->send_data(), buffers_->recv_data(), sends, recvs);
}

void MpiTransport::exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                                   const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) {
  mpi_exchange_counts(comm_.get(), requests_, sends, send_counts, recvs, recv_counts);
}

void MpiTransport::allreduce(const float* send, float* recv, std::size_t count) {
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

std::optional<std::string> mpi_refuse_size(std::uint64_t bytes) {
  if (bytes > static_cast<std::uint64_t>(INT_MAX))
    return format_size(bytes) + " is above the largest MPI message of MPI_BYTE with an int count";
  return std::nullopt;
}

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class HostMpiTransport final : public MpiTransport {
 public:
  HostMpiTransport(std::size_t send_bytes, std::size_t recv_bytes)
      : MpiTransport(mpi::make_message_buffers(mpi::MessageMemory::Host, {send_bytes, recv_bytes})) {}
  std::string describe() const override { return "host buffers (malloc, page-aligned)"; }
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
};

BenchmarkInfo host_info(std::string key, std::string description, Metric metric, std::vector<std::uint64_t> sizes,
                        std::vector<std::uint64_t> quick) {
  return {std::move(key), Category::PointToPoint, "mpi", std::move(description), metric,
          RankRange{2, 0}, std::move(sizes), std::move(quick)};
}

const bool registered = register_transport(TransportSpec{
    Mechanism::MpiHost,
    "mpi",
    [](const Context& ctx) { return mpi::mpi_run_unavailable(ctx); },
    [](Context&, const Params&, std::size_t send_bytes, std::size_t recv_bytes) -> std::unique_ptr<Transport> {
      return std::make_unique<HostMpiTransport>(send_bytes, recv_bytes);
    },
    {
        {Protocol::PingPong,
         host_info("mpi.pingpong",
                   "MPI_Send/MPI_Recv ping-pong between ranks 0 and 1 on host buffers, half round trip (osu_latency)",
                   Metric::Latency, {1, 64, 4096, 64ull << 10, 1ull << 20},
                   {8, 4096})},  // the sizes the OSU comparison uses
        {Protocol::Bandwidth,
         host_info("mpi.bandwidth", "windows of 64 MPI_Isend rank 0 -> 1 on host buffers, acked (osu_bw)",
                   Metric::Bandwidth, {1, 64, 4096, 64ull << 10, 1ull << 20, 16ull << 20}, {4096, 1ull << 20})},
        {Protocol::Bibw,
         host_info(
             "mpi.bibw",
             "windows of 64 messages each way between ranks 0 and 1 at once on host buffers, sum of both (osu_bibw)",
             Metric::Bandwidth, {1, 64, 4096, 64ull << 10, 1ull << 20, 16ull << 20}, {4096, 1ull << 20})},
    },
    nullptr,
    nullptr,
    mpi_refuse_size,
    PatternSide{"mpi", false, true, nullptr, nullptr}});

}  // namespace
}  // namespace commatlas
