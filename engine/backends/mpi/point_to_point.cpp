#include "backends/mpi/point_to_point.h"

#include <climits>
#include <vector>

#include "backends/mpi/mpi_check.h"
#include "backends/mpi/mpi_comm.h"
#include "core/all_ranks.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/pattern.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

constexpr int kOrigin = 0;
constexpr int kPeer = 1;
constexpr int kPayloadTag = 1;
constexpr int kAckTag = 2;

// Each sender fills its messages with its own seed, so a receiver that got its own bytes back,
// or the wrong rank's, fails the check.
std::uint64_t sender_seed(std::uint64_t run_seed, int sender) { return run_seed * 1000003ull + static_cast<std::uint64_t>(sender) + 1; }

bool sends_payload(P2pProtocol p, int rank) { return rank == kOrigin || (rank == kPeer && p != P2pProtocol::Unidirectional); }
bool receives_payload(P2pProtocol p, int rank) { return rank == kPeer || (rank == kOrigin && p != P2pProtocol::Unidirectional); }

class P2pWorkload final : public Workload {
 public:
  P2pWorkload(Context& ctx, const P2pSpec& spec, std::size_t bytes)
      : spec_(spec), bytes_(bytes), allocated_(bytes), run_seed_(ctx.options.seed) {
    const MessageSizes sizes = sizes_of(bytes);
    buffers_ = make_on_all_ranks(ctx.group, [&] {
      return spec.make_buffers ? spec.make_buffers(sizes) : make_message_buffers(spec.memory, sizes);
    });
    if (sizes.send_bytes > 0) {
      fill_pattern(buffers_->send_view(), bytes, sender_seed(run_seed_, comm_.rank()));
      buffers_->publish_send();
    }
    stages_ = buffers_->memory() == MessageMemory::StagedDevice;
    requests_.resize(2 * kMessageWindow, MPI_REQUEST_NULL);
  }

  // Inside the buffers of the largest size: the sent pattern is a function of the byte's index, so
  // its prefix is the smaller message; MessageBuffers::resize poisons the receive side. Every rank
  // compares with the same allocated size and the same memory kind, so all answer alike.
  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_ || !buffers_->resize(sizes_of(bytes))) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = p2p_bytes_per_op(spec_.protocol, bytes_);
    const std::string where = buffers_->describe();
    switch (spec_.protocol) {
      case P2pProtocol::PingPong:
        a.timing = "host steady_clock on rank 0 around a batch of round trips; per-op time halved";
        a.latency_includes = "half a round trip (osu_latency): rank 0 MPI_Send + MPI_Recv of the reply, rank 1 "
                             "MPI_Recv + MPI_Send, " + where;
        break;
      case P2pProtocol::Unidirectional:
        a.timing = "host steady_clock on rank 0 around a batch of windows";
        a.latency_includes = "one window (osu_bw): " + std::to_string(kMessageWindow) +
                             " MPI_Isend 0->1 + MPI_Waitall, then a 4-byte ack 1->0, " + where;
        break;
      case P2pProtocol::Bidirectional:
        a.timing = "host steady_clock on rank 0 around a batch of windows";
        a.latency_includes = "one window each way at once (osu_bibw): " + std::to_string(kMessageWindow) +
                             " MPI_Irecv + " + std::to_string(kMessageWindow) + " MPI_Isend per rank + MPI_Waitall, " + where;
        break;
    }
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (!active()) return;  // idle ranks: the harness reports rank 0's samples
    const std::size_t first = seconds.size();
    // Test-only (COMMATLAS_TEST_SKIP_MOVE): both ranks read the same switch, so both skip.
    if (planted_no_move())
      time_host_samples(samples, ops, seconds, [] { asm volatile("" ::: "memory"); });
    else
      time_host_samples(samples, ops, seconds, [this] { one_op(); });
    // One op is a round trip; osu_latency's figure is half of it.
    if (spec_.protocol == P2pProtocol::PingPong)
      for (std::size_t i = first; i < seconds.size(); ++i) seconds[i] /= 2;
  }

  Verification verify() override {
    if (!active() || !receives_payload(spec_.protocol, comm_.rank())) return {true, 0, ""};
    const int sender = comm_.rank() == kOrigin ? kPeer : kOrigin;
    const std::size_t bad = find_pattern_mismatch(buffers_->fetch_recv(), bytes_, sender_seed(run_seed_, sender));
    if (bad == bytes_) return {true, bytes_, ""};
    return {false, bytes_,
            "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " message from rank " +
                std::to_string(sender) + " differs from what rank " + std::to_string(sender) + " sent"};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  // Staged buffers poison their host staging copy too: a receive that did not happen would
  // otherwise stage the warm-up's bytes into the device buffer.
  void prepare_batch() override {
    if (active()) buffers_->poison_recv();
  }
  bool active() const { return comm_.rank() == kOrigin || comm_.rank() == kPeer; }
  MessageSizes sizes_of(std::size_t bytes) const {
    const int me = comm_.rank();
    return {sends_payload(spec_.protocol, me) ? bytes : 0, receives_payload(spec_.protocol, me) ? bytes : 0};
  }
  int peer() const { return comm_.rank() == kOrigin ? kPeer : kOrigin; }
  int count() const { return static_cast<int>(bytes_); }

  void one_op() {
    // Where MPI reads and writes, asked once per operation: the window loops below then make no
    // call OSU's loops do not (they made two indirect calls per message on each rank, 128 per
    // 1-byte window of about 10 us, and staging hooks that do nothing for host buffers).
    send_ = buffers_->send_data();
    recv_ = buffers_->recv_data();
    switch (spec_.protocol) {
      case P2pProtocol::PingPong: return round_trip();
      case P2pProtocol::Unidirectional: return window_one_way();
      case P2pProtocol::Bidirectional: return window_both_ways();
    }
  }

  void send_message() {
    if (stages_) buffers_->stage_before_send();
    COMMATLAS_MPI(MPI_Send(send_, count(), MPI_BYTE, peer(), kPayloadTag, comm_.get()));
  }
  void receive_message() {
    COMMATLAS_MPI(MPI_Recv(recv_, count(), MPI_BYTE, peer(), kPayloadTag, comm_.get(), MPI_STATUS_IGNORE));
    if (stages_) buffers_->stage_after_receive();
  }

  void round_trip() {
    if (comm_.rank() == kOrigin) {
      send_message();
      receive_message();
    } else {
      receive_message();
      send_message();
    }
  }

  // All messages of a window share one buffer, as in osu_bw: the footprint stays one message
  // (64 MiB messages would need 4 GiB otherwise) and every message carries the same bytes.
  void post_sends(MPI_Request* requests) {
    const int n = count(), to = peer();
    for (int w = 0; w < kMessageWindow; ++w) {
      if (stages_) buffers_->stage_before_send();
      COMMATLAS_MPI(MPI_Isend(send_, n, MPI_BYTE, to, kPayloadTag, comm_.get(), &requests[w]));
    }
  }
  void post_receives(MPI_Request* requests) {
    const int n = count(), from = peer();
    for (int w = 0; w < kMessageWindow; ++w)
      COMMATLAS_MPI(MPI_Irecv(recv_, n, MPI_BYTE, from, kPayloadTag, comm_.get(), &requests[w]));
  }
  void wait(MPI_Request* requests, int n) { COMMATLAS_MPI(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE)); }
  void unstage_receives() {
    if (!stages_) return;
    for (int w = 0; w < kMessageWindow; ++w) buffers_->stage_after_receive();
  }

  void window_one_way() {
    if (comm_.rank() == kOrigin) {
      post_sends(requests_.data());
      wait(requests_.data(), kMessageWindow);
      // The ack: the window is done only when the receiver has every message.
      COMMATLAS_MPI(MPI_Recv(&ack_, 1, MPI_INT, peer(), kAckTag, comm_.get(), MPI_STATUS_IGNORE));
    } else {
      post_receives(requests_.data());
      wait(requests_.data(), kMessageWindow);
      unstage_receives();
      COMMATLAS_MPI(MPI_Send(&ack_, 1, MPI_INT, peer(), kAckTag, comm_.get()));
    }
  }

  // As osu_bibw: the sends' MPI_Waitall, then the receives'.
  void window_both_ways() {
    post_receives(requests_.data());
    post_sends(requests_.data() + kMessageWindow);
    wait(requests_.data() + kMessageWindow, kMessageWindow);
    wait(requests_.data(), kMessageWindow);
    unstage_receives();
  }

  P2pSpec spec_;
  std::size_t bytes_;
  std::size_t allocated_;  // the message size the buffers were made for
  std::uint64_t run_seed_;
  MpiComm comm_;
  std::unique_ptr<MessageBuffers> buffers_;
  std::vector<MPI_Request> requests_;
  bool stages_ = false;  // staged buffers: each message is copied through host memory, timed
  void* send_ = nullptr;  // this operation's buffers (one_op)
  void* recv_ = nullptr;
  int ack_ = 0;
};

}  // namespace

const char* p2p_direction(P2pProtocol protocol) {
  switch (protocol) {
    case P2pProtocol::PingPong: return "half_round_trip";
    case P2pProtocol::Unidirectional: return "uni";
    case P2pProtocol::Bidirectional: return "bi";
  }
  return "unknown";
}

Movement p2p_movement(P2pProtocol protocol, Mechanism mechanism, Endpoint from, Endpoint to) {
  from.rank = kOrigin;
  to.rank = kPeer;
  switch (protocol) {
    case P2pProtocol::PingPong:
      return movement_between(Operation::PingPong, MoveDirection::HalfRoundTrip, mechanism, from, to);
    case P2pProtocol::Unidirectional: return movement_between(Operation::SendRecv, MoveDirection::Uni, mechanism, from, to);
    case P2pProtocol::Bidirectional: return movement_between(Operation::SendRecv, MoveDirection::Bi, mechanism, from, to);
  }
  return movement_between(Operation::SendRecv, MoveDirection::Uni, mechanism, from, to);
}

Movement p2p_host_movement(P2pProtocol protocol) {
  return p2p_movement(protocol, Mechanism::MpiHost, host_memory(std::nullopt, "pageable"),
                      host_memory(std::nullopt, "pageable"));
}

double p2p_bytes_per_op(P2pProtocol protocol, std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  switch (protocol) {
    case P2pProtocol::PingPong: return b;
    case P2pProtocol::Unidirectional: return kMessageWindow * b;
    case P2pProtocol::Bidirectional: return 2.0 * kMessageWindow * b;
  }
  return 0;
}

std::unique_ptr<Workload> prepare_p2p_workload(Context& ctx, const P2pSpec& spec, std::uint64_t bytes) {
  if (bytes > static_cast<std::uint64_t>(INT_MAX))
    throw Skip(format_size(bytes) + " is above the largest MPI message of MPI_BYTE with an int count");
  return std::make_unique<P2pWorkload>(ctx, spec, static_cast<std::size_t>(bytes));
}

std::optional<std::string> mpi_run_unavailable(const Context& ctx) {
  if (ctx.group.kind() != "mpi") return "needs an MPI job (start the engine under mpiexec)";
  return std::nullopt;
}

}  // namespace commatlas
