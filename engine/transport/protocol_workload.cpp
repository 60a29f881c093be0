#include "transport/protocol_workload.h"

#include "core/all_ranks.h"
#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

// Each sender fills its messages with its own seed, so a receiver that got its own bytes back, or
// the wrong end's, fails the check.
std::uint64_t sender_seed(std::uint64_t run_seed, int end) { return run_seed * 1000003ull + static_cast<std::uint64_t>(end) + 1; }

bool sends(Protocol p, int end) { return end == kOriginEnd || (end == kPeerEnd && p != Protocol::Bandwidth); }
bool receives(Protocol p, int end) { return end == kPeerEnd || (end == kOriginEnd && p != Protocol::Bandwidth); }
int other(int end) { return end == kOriginEnd ? kPeerEnd : kOriginEnd; }

class ProtocolWorkload final : public Workload {
 public:
  ProtocolWorkload(Context& ctx, const TransportMaker& make, const Params& params, Protocol protocol, std::size_t bytes)
      : group_(ctx.group), protocol_(protocol), bytes_(bytes), allocated_(bytes), seed_(ctx.options.seed) {
    // A rank past the two ends drives none: it gets no buffers.
    const std::size_t mine = ctx.group.rank() > kPeerEnd ? 0 : bytes;
    transport_ = make_on_all_ranks(ctx.group, [&] { return make(ctx, params, mine, mine); });
    ends_ = transport_->local_ends();
    for (int end : ends_)
      if (sends(protocol_, end)) transport_->fill_send(end, bytes_, sender_seed(seed_, end));
    connect_and_poison();
  }

  // Inside the buffers of the largest size: the sent pattern is a function of the byte's index, so
  // its prefix is the smaller message. Every rank compares with the same allocated size (and the
  // transport answers alike on every rank).
  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_ || !transport_->resize(static_cast<std::size_t>(bytes))) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    connect_and_poison();
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    const ProtocolWords words = transport_->words(protocol_);
    a.timing = words.timing;
    a.latency_includes = words.latency_includes;
    a.bytes_per_op = p2p_bytes_per_op(protocol_, bytes_, transport_->window_messages());
    a.max_over_ranks = transport_->max_over_ends(protocol_);
    a.min_sample_s = transport_->min_sample_s();
    a.one_op_per_sample = transport_->one_op_per_sample(protocol_);
    a.copy_level_witness = transport_->copy_level_witness();
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (!timed_here()) return;  // idle ranks: the harness reports rank 0's samples
    const std::size_t first = seconds.size();
    // Test-only (COMMATLAS_TEST_SKIP_MOVE): every rank reads the same switch, so all skip alike.
    const bool move = !planted_no_move();
    if (!transport_->run_native(protocol_, bytes_, samples, ops, seconds, move)) {
      if (move)
        transport_->time(protocol_, samples, ops, seconds, [this] { one_op(); });
      else
        transport_->time(protocol_, samples, ops, seconds, [] {});
    }
    transport_->check_run();
    // One op is a round trip; osu_latency's figure is half of it.
    if (protocol_ == Protocol::PingPong)
      for (std::size_t i = first; i < seconds.size(); ++i) seconds[i] /= 2;
  }

  std::optional<double> host_enqueue_s() const override { return transport_->host_enqueue_s(); }
  std::optional<double> copy_level_us() override { return transport_->copy_level_us(); }

  Verification verify() override {
    group_.barrier();  // every sender is done (a stream clock drained its streams in time())
    std::uint64_t checked = 0;
    for (int end : ends_) {
      if (!receives(protocol_, end)) continue;
      const int from = other(end);
      const std::size_t bad = transport_->check_recv(end, bytes_, sender_seed(seed_, from));
      checked += bytes_;
      if (bad != bytes_)
        return {false, checked,
                "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " message from rank " +
                    std::to_string(from) + " differs from what rank " +
                    std::to_string(from) + " sent"};
    }
    return {true, checked, ""};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  // Each receiver poisons its own buffer; a transport that writes into the peer's memory must not
  // start before every buffer is poisoned, so the barrier here, not only the harness's.
  void prepare_batch() override {
    poison();
    group_.barrier();
  }

  void poison() {
    for (int end : ends_)
      if (receives(protocol_, end)) transport_->poison_recv(end, bytes_);
  }

  void connect_and_poison() {
    transport_->connect([this] { one_op(); });
    poison();
  }

  bool timed_here() const {
    for (int end : ends_)
      if (transport_->times(protocol_, end)) return true;
    return false;
  }

  void one_op() {
    switch (protocol_) {
      case Protocol::PingPong:
        transport_->transfer(kOriginEnd, kPeerEnd, bytes_);
        transport_->transfer(kPeerEnd, kOriginEnd, bytes_);
        return;
      case Protocol::Bandwidth: return transport_->window(kOriginEnd, kPeerEnd, bytes_);
      case Protocol::Bibw: return transport_->window_both(kOriginEnd, kPeerEnd, bytes_);
    }
  }

  Group& group_;
  Protocol protocol_;
  std::size_t bytes_;
  std::size_t allocated_;  // the message size the transport's buffers were made for
  std::uint64_t seed_;
  std::unique_ptr<Transport> transport_;
  std::vector<int> ends_;
};

}  // namespace

std::unique_ptr<Workload> make_protocol_workload(Context& ctx, const TransportMaker& make, const Params& params,
                                                 Protocol protocol, std::uint64_t bytes) {
  return std::make_unique<ProtocolWorkload>(ctx, make, params, protocol, static_cast<std::size_t>(bytes));
}

}  // namespace commatlas
