// The transport layer without hardware: the point-to-point protocols' one workload over a loopback
// transport (one process plays both ends and copies with memcpy), measured by the real harness.
// It is also the smallest complete transport, the shape docs/adding-a-mechanism.md describes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/harness.h"
#include "core/pattern.h"
#include "transport/protocol_workload.h"
#include "transport/transport.h"

namespace commatlas {
namespace {

// `copies`: how many transfers really copy (-1: all), the planted fault of a transport whose copies
// stop after the untimed probe has filled the destination, which only the poisoning before each
// timed batch can catch; `native`: runs every protocol by itself (as a persistent GPU kernel
// would) and counts how often it was asked.
struct LoopbackOptions {
  int copies = -1;
  bool native = false;
  int* native_runs = nullptr;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(std::size_t send_bytes, std::size_t recv_bytes, LoopbackOptions o) : o_(o) {
    for (auto& e : ends_) e.send.assign(send_bytes, 0), e.recv.assign(recv_bytes, 0);
  }
  std::string describe() const override { return "host vectors of one process"; }
  ProtocolWords words(Protocol p) const override { return {"host steady_clock", std::string(protocol_name(p)) + " by memcpy"}; }
  std::vector<int> local_ends() const override { return {kOriginEnd, kPeerEnd}; }

  void fill_send(int end, std::size_t bytes, std::uint64_t seed) override { fill_pattern(ends_[end].send.data(), bytes, seed); }
  void poison_recv(int end, std::size_t bytes) override { std::memset(ends_[end].recv.data(), 0xFF, bytes); }
  std::size_t check_recv(int end, std::size_t bytes, std::uint64_t seed) override {
    return find_pattern_mismatch(ends_[end].recv.data(), bytes, seed);
  }

  void transfer(int from, int to, std::size_t bytes) override {
    if (o_.copies < 0 || copied_++ < o_.copies) std::memcpy(ends_[to].recv.data(), ends_[from].send.data(), bytes);
  }
  void window(int from, int to, std::size_t bytes) override { transfer(from, to, bytes); }
  void window_both(int a, int b, std::size_t bytes) override {
    transfer(a, b, bytes);
    transfer(b, a, bytes);
  }
  void time(Protocol, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
            const std::function<void()>& op) override {
    time_host_samples(samples, ops, seconds, op);
  }
  bool run_native(Protocol p, std::size_t bytes, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
                  bool move) override {
    if (!o_.native) return false;
    ++*o_.native_runs;
    time_host_samples(samples, ops, seconds, [&] {
      if (!move) return;
      if (p == Protocol::Bibw) return window_both(kOriginEnd, kPeerEnd, bytes);
      transfer(kOriginEnd, kPeerEnd, bytes);
      if (p == Protocol::PingPong) transfer(kPeerEnd, kOriginEnd, bytes);
    });
    return true;
  }

 private:
  struct End {
    std::vector<unsigned char> send, recv;
  };
  LoopbackOptions o_;
  int copied_ = 0;
  End ends_[2];
};

TransportMaker loopback(LoopbackOptions o = {}) {
  return [o](Context&, const Params&, std::size_t s, std::size_t r) -> std::unique_ptr<Transport> {
    return std::make_unique<LoopbackTransport>(s, r, o);
  };
}

RunOptions short_run() {
  RunOptions o;
  o.time_budget_s = 0.01;
  o.precision = 0;
  return o;
}

TEST(TransportProtocols, EveryProtocolMovesAndChecksTheBytesOverAnyTransport) {
  SingleProcessGroup group;
  Context ctx(short_run(), group, HostFacts{});
  for (Protocol p : kProtocols) {
    auto w = make_protocol_workload(ctx, loopback(), Params{}, p, 4096);
    const Measurement m = measure(*w, ctx);
    EXPECT_TRUE(m.verification.ok) << protocol_name(p) << ": " << m.verification.detail;
    // A bandwidth operation of a one-message window counts one message per direction.
    EXPECT_EQ(w->accounting().bytes_per_op, p2p_bytes_per_op(p, 4096, 1)) << protocol_name(p);
    EXPECT_EQ(w->accounting().latency_includes, std::string(protocol_name(p)) + " by memcpy");
  }
}

TEST(TransportProtocols, CopiesThatStopAfterTheProbeFailTheDataCheck) {
  SingleProcessGroup group;
  Context ctx(short_run(), group, HostFacts{});
  for (Protocol p : kProtocols) {
    auto w = make_protocol_workload(ctx, loopback({2, false, nullptr}), Params{}, p, 4096);
    const Measurement m = measure(*w, ctx);
    EXPECT_FALSE(m.verification.ok) << protocol_name(p);
    EXPECT_NE(m.verification.detail.find("differs from what rank"), std::string::npos) << m.verification.detail;
  }
}

TEST(TransportProtocols, ASmallerSizeIsMeasuredInsideTheSameBuffers) {
  SingleProcessGroup group;
  Context ctx(short_run(), group, HostFacts{});
  auto w = make_protocol_workload(ctx, loopback(), Params{}, Protocol::PingPong, 4096);
  ASSERT_TRUE(w->resize_for_next_size(64));
  EXPECT_EQ(w->accounting().bytes_per_op, 64);
  EXPECT_TRUE(measure(*w, ctx).verification.ok);
  EXPECT_FALSE(w->resize_for_next_size(8192)) << "past the buffers the transport was made with";
}

// A transport that runs a protocol natively (one kernel for a whole batch) is deferred to, and
// the ping-pong's round trip is still halved by the generic side.
TEST(TransportProtocols, ANativeProtocolReplacesTheGenericLoop) {
  SingleProcessGroup group;
  Context ctx(short_run(), group, HostFacts{});
  int runs = 0;
  auto w = make_protocol_workload(ctx, loopback({-1, true, &runs}), Params{}, Protocol::PingPong, 256);
  const Measurement m = measure(*w, ctx);
  EXPECT_TRUE(m.verification.ok) << m.verification.detail;
  EXPECT_GT(runs, 0);
  std::vector<double> seconds;
  w->run(3, 1, seconds);
  ASSERT_EQ(seconds.size(), 3u);
}

TEST(TransportProtocols, NamesDirectionsAndMetrics) {
  EXPECT_STREQ(protocol_name(Protocol::Bibw), "bibw");
  EXPECT_STREQ(p2p_direction(Protocol::PingPong), "half_round_trip");
  EXPECT_EQ(protocol_metric(Protocol::PingPong), Metric::Latency);
  EXPECT_EQ(protocol_metric(Protocol::Bandwidth), Metric::Bandwidth);
}

}  // namespace
}  // namespace commatlas
