// The wire witness without a GPU: the verdict from counter gains, the route of each kind of
// movement, the untimed pass the runner asks for, and the record, with a fake witness.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/group.h"
#include "core/records.h"
#include "core/runner.h"
#include "core/wire.h"
#include "tests/fake_workload.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

using testing::FakeWorkload;

constexpr double kMiB = 1 << 20;

WireCounter counter(double tx, double rx) {
  WireCounter c;
  c.readable = true;
  c.tx_bytes = tx;
  c.rx_bytes = rx;
  return c;
}

WireCounter unreadable(const std::string& why) {
  WireCounter c;
  c.why = why;
  return c;
}

GpuWire gpu_wire(int gpu, WireCounter nvlink, WireCounter pcie) {
  GpuWire g;
  g.gpu = gpu;
  g.nvlink = std::move(nvlink);
  g.pcie = std::move(pcie);
  return g;
}

WireRoute nvlink_pair() {
  WireRoute r;
  r.applies = true;
  r.link = WireLink::Nvlink;
  r.gpus = {0, 1};
  r.path = "GPU 0 <-> GPU 1 over NVLink";
  return r;
}

WireRoute host_to_gpu0() {
  WireRoute r;
  r.applies = true;
  r.link = WireLink::Pcie;
  r.gpus = {0};
  r.host_end = true;
  r.path = "host <-> GPU 0 over PCIe";
  return r;
}

TEST(WireVerdict, PeerCopySeenOnNvlinkIsOk) {
  // 256 MiB from GPU 0 to GPU 1: GPU 0 sent it, GPU 1 received it, a little PCIe besides.
  const std::vector<GpuWire> counted{gpu_wire(0, counter(256 * kMiB, 1 * kMiB), counter(4096, 4096)),
                                     gpu_wire(1, counter(1 * kMiB, 256 * kMiB), counter(4096, 4096))};
  const WireCheck c = judge_wire(nvlink_pair(), 256 * kMiB, counted);
  EXPECT_EQ(c.verdict, WireVerdict::Ok) << c.detail;
  ASSERT_TRUE(c.observed_bytes);
  EXPECT_DOUBLE_EQ(*c.observed_bytes, 257 * kMiB);  // each byte once as tx, once as rx
  ASSERT_TRUE(c.other_link_bytes);
  EXPECT_DOUBLE_EQ(*c.other_link_bytes, 8192);
  EXPECT_NE(c.detail.find("NVLink counted"), std::string::npos) << c.detail;
}

TEST(WireVerdict, PeerCopyThatCrossedPcieFails) {
  const std::vector<GpuWire> counted{gpu_wire(0, counter(0, 0), counter(256 * kMiB, 0)),
                                     gpu_wire(1, counter(0, 0), counter(0, 256 * kMiB))};
  const WireCheck c = judge_wire(nvlink_pair(), 256 * kMiB, counted);
  EXPECT_EQ(c.verdict, WireVerdict::Failed);
  EXPECT_NE(c.detail.find("crossed PCIe, not the NVLink"), std::string::npos) << c.detail;
}

TEST(WireVerdict, FarFewerBytesThanClaimedFails) {
  const std::vector<GpuWire> counted{gpu_wire(0, counter(100 * kMiB, 0), counter(0, 0)),
                                     gpu_wire(1, counter(0, 100 * kMiB), counter(0, 0))};
  const WireCheck c = judge_wire(nvlink_pair(), 256 * kMiB, counted);
  EXPECT_EQ(c.verdict, WireVerdict::Failed);
  EXPECT_NE(c.detail.find("far fewer bytes"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("(39%)"), std::string::npos) << c.detail;
}

TEST(WireVerdict, HalfTheClaimIsTheLine) {
  const std::vector<GpuWire> at_half{gpu_wire(0, counter(128 * kMiB, 0), counter(0, 0)),
                                     gpu_wire(1, counter(0, 128 * kMiB), counter(0, 0))};
  EXPECT_EQ(judge_wire(nvlink_pair(), 256 * kMiB, at_half).verdict, WireVerdict::Ok);
  const std::vector<GpuWire> below{gpu_wire(0, counter(127 * kMiB, 0), counter(0, 0)),
                                   gpu_wire(1, counter(0, 127 * kMiB), counter(0, 0))};
  EXPECT_EQ(judge_wire(nvlink_pair(), 256 * kMiB, below).verdict, WireVerdict::Failed);
}

TEST(WireVerdict, UnreadableCounterSaysWhy) {
  const std::vector<GpuWire> counted{gpu_wire(0, unreadable("field 138: Not Supported"), counter(0, 0)),
                                     gpu_wire(1, unreadable("field 138: Not Supported"), counter(0, 0))};
  const WireCheck c = judge_wire(nvlink_pair(), 256 * kMiB, counted);
  EXPECT_EQ(c.verdict, WireVerdict::Unreadable);
  EXPECT_NE(c.detail.find("NVLink counters of GPU 0: field 138: Not Supported"), std::string::npos) << c.detail;
  EXPECT_FALSE(c.observed_bytes);
}

TEST(WireVerdict, TooFewClaimedBytesAreNotJudged) {
  const WireCheck c = judge_wire(nvlink_pair(), 64 * 1024, {});
  EXPECT_EQ(c.verdict, WireVerdict::NotJudged);
  EXPECT_NE(c.detail.find("below the 1 MiB"), std::string::npos) << c.detail;
}

TEST(WireVerdict, HostCopyCountsEachByteOnceOnTheGpusPcie) {
  const std::vector<GpuWire> counted{gpu_wire(0, unreadable("no active NVLink"), counter(1 * kMiB, 64 * kMiB))};
  const WireCheck c = judge_wire(host_to_gpu0(), 64 * kMiB, counted);
  EXPECT_EQ(c.verdict, WireVerdict::Ok) << c.detail;
  EXPECT_DOUBLE_EQ(*c.observed_bytes, 65 * kMiB);
  EXPECT_FALSE(c.other_link_bytes);  // host memory has no other link to cross
  // A host copy that moved nothing over PCIe fails, whatever NVLink did.
  const std::vector<GpuWire> flat{gpu_wire(0, counter(64 * kMiB, 64 * kMiB), counter(8192, 8192))};
  EXPECT_EQ(judge_wire(host_to_gpu0(), 64 * kMiB, flat).verdict, WireVerdict::Failed);
}

TEST(WireVerdict, CounterNarrowerThanTheClaimIsUnreadable) {
  WireCounter narrow = counter(8 * kMiB, 8 * kMiB);
  narrow.wrap_bytes = 4 * kMiB;
  const WireCheck c = judge_wire(host_to_gpu0(), 64 * kMiB, {gpu_wire(0, unreadable("-"), narrow)});
  EXPECT_EQ(c.verdict, WireVerdict::Unreadable);
  EXPECT_NE(c.detail.find("wrap every 4 MiB"), std::string::npos) << c.detail;
}

TEST(WireDifference, UndoesAWrapAndRefusesACounterThatWentBack) {
  WireCounter before = counter(4294967000.0, 10);
  before.wrap_bytes = 4294967296.0;
  WireCounter after = counter(704, 1010);  // wrapped: 296 + 704 = 1000 bytes
  after.wrap_bytes = 4294967296.0;
  const GpuWire d = wire_difference(gpu_wire(0, unreadable("x"), before), gpu_wire(0, unreadable("x"), after));
  ASSERT_TRUE(d.pcie.readable);
  EXPECT_DOUBLE_EQ(d.pcie.tx_bytes, 1000);
  EXPECT_DOUBLE_EQ(d.pcie.rx_bytes, 1000);
  EXPECT_FALSE(d.nvlink.readable);
  EXPECT_EQ(d.nvlink.why, "x");

  const GpuWire back = wire_difference(gpu_wire(0, counter(5000, 5000), counter(0, 0)),
                                       gpu_wire(0, counter(100, 6000), counter(0, 0)));  // 64-bit: a reset
  EXPECT_FALSE(back.nvlink.readable);
  EXPECT_NE(back.nvlink.why.find("went back"), std::string::npos);
}

TEST(WireDifference, KeepsEachLinksGain) {
  WireCounter before = counter(100, 100), after = counter(300, 150);
  before.links = {{0, 50, 50}, {1, 50, 50}};
  after.links = {{0, 150, 75}, {1, 150, 75}};
  const GpuWire d = wire_difference(gpu_wire(0, before, counter(0, 0)), gpu_wire(0, after, counter(0, 0)));
  ASSERT_EQ(d.nvlink.links.size(), 2u);
  EXPECT_EQ(d.nvlink.links[1].id, 1);
  EXPECT_DOUBLE_EQ(d.nvlink.links[1].tx_bytes, 100);
  EXPECT_DOUBLE_EQ(d.nvlink.links[1].rx_bytes, 25);
}

// Two GPUs joined by NVLink and one over PCIe, as build_topology leaves them.
Topology three_gpus() {
  Topology t;
  for (int i = 0; i < 3; ++i) {
    GpuInfo g;
    g.index = i;
    t.gpus.push_back(g);
  }
  auto pair = [&](int a, int b, const char* link) {
    GpuPair p;
    p.src = a;
    p.dst = b;
    p.link = link;
    t.pairs.push_back(p);
  };
  pair(0, 1, "nvlink");
  pair(1, 0, "nvlink");
  pair(0, 2, "pcie");
  pair(2, 0, "pcie");
  pair(1, 2, "pcie");
  pair(2, 1, "pcie");
  return t;
}

TEST(WireRoute, FollowsTheMovementAndTheNodesLinks) {
  const Topology t = three_gpus();
  const WireRoute peer =
      wire_route(movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CopyEngine,
                                  gpu_memory(1, Allocator::Device), gpu_memory(0, Allocator::Device)),
                 t);
  EXPECT_TRUE(peer.applies);
  EXPECT_TRUE(peer.not_judged.empty()) << peer.not_judged;
  EXPECT_EQ(peer.link, WireLink::Nvlink);
  EXPECT_EQ(peer.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(peer.host_end);
  EXPECT_EQ(peer.path, "GPU 0 <-> GPU 1 over NVLink");

  const WireRoute over_pcie =
      wire_route(movement_between(Operation::Copy, MoveDirection::Bi, Mechanism::SmCopy,
                                  gpu_memory(0, Allocator::Device), gpu_memory(2, Allocator::Device)),
                 t);
  EXPECT_EQ(over_pcie.link, WireLink::Pcie);
  EXPECT_FALSE(over_pcie.host_end);

  const WireRoute h2d =
      wire_route(movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CopyEngine,
                                  host_memory(0, Allocator::Pinned), gpu_memory(0, Allocator::Device)),
                 t);
  EXPECT_TRUE(h2d.applies);
  EXPECT_EQ(h2d.link, WireLink::Pcie);
  EXPECT_TRUE(h2d.host_end);

  // A GPU reading a peer's memory: the processor end is a GPU place too.
  const WireRoute read = wire_route(movement_between(Operation::Read, MoveDirection::Uni, Mechanism::GpuLoadStore,
                                                     gpu_memory(1, Allocator::Device), gpu_processor(0)),
                                    t);
  EXPECT_EQ(read.link, WireLink::Nvlink);

  // A ping-pong between the pair crosses its link both ways.
  const WireRoute pingpong =
      wire_route(movement_between(Operation::PingPong, MoveDirection::HalfRoundTrip, Mechanism::MpiGpuAware,
                                  gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device)),
                 t);
  EXPECT_TRUE(pingpong.applies);
  EXPECT_EQ(pingpong.link, WireLink::Nvlink);
  EXPECT_EQ(pingpong.path, "GPU 0 <-> GPU 1 over NVLink");

  // Host-staged MPI between the NVLinked pair still crosses PCIe, twice.
  const WireRoute staged =
      wire_route(movement_between(Operation::SendRecv, MoveDirection::Uni, Mechanism::MpiStaged,
                                  gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device)),
                 t);
  EXPECT_EQ(staged.link, WireLink::Pcie);
  EXPECT_FALSE(staged.host_end);
}

TEST(WireRoute, LeavesOutWhatCrossesNoLinkOrDeclaresNoBytesPerLink) {
  const Topology t = three_gpus();
  const auto route = [&](Operation op, MoveDirection d, Mechanism mech, Endpoint from, Endpoint to) {
    return wire_route(movement_between(op, d, mech, std::move(from), std::move(to)), t);
  };
  EXPECT_FALSE(route(Operation::Copy, MoveDirection::Uni, Mechanism::SmCopy, gpu_memory(0, Allocator::Device),
                     gpu_memory(0, Allocator::Device))
                   .applies);  // within one GPU
  EXPECT_FALSE(route(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy, host_memory(0, Allocator::Pageable),
                     host_memory(0, Allocator::Pageable))
                   .applies);
  EXPECT_FALSE(route(Operation::LoadLatency, MoveDirection::Uni, Mechanism::GpuLoadStore,
                     gpu_memory(1, Allocator::Device), gpu_processor(0))
                   .applies);
  EXPECT_FALSE(route(Operation::Allreduce, MoveDirection::AllToAll, Mechanism::Nccl, gpu_memory(0, Allocator::Device),
                     gpu_memory(1, Allocator::Device))
                   .applies);
  Movement between_nodes = movement_between(Operation::SendRecv, MoveDirection::Uni, Mechanism::MpiGpuAware,
                                            gpu_memory(0, Allocator::Device), gpu_memory(0, Allocator::Device));
  between_nodes.same_node = false;
  EXPECT_FALSE(wire_route(between_nodes, t).applies);

  // Applies, but cannot be judged here: it says why.
  const WireRoute missing = route(Operation::Copy, MoveDirection::Uni, Mechanism::CopyEngine,
                                  gpu_memory(0, Allocator::Device), gpu_memory(7, Allocator::Device));
  EXPECT_TRUE(missing.applies);
  EXPECT_NE(missing.not_judged.find("GPU 7 is not in this node's topology"), std::string::npos) << missing.not_judged;
}

// A witness whose counters gain what the test says, after the pass has run.
class FakeWitness final : public WireWitness {
 public:
  std::string source() const override { return "fake counters"; }
  WireRoute route(const Movement& m) const override { return wire_route(m, topology); }
  std::optional<std::string> unavailable() const override { return why_unavailable; }
  std::vector<GpuWire> read(const std::vector<int>& gpus) override {
    ++reads;
    std::vector<GpuWire> out;
    for (int gpu : gpus) {
      GpuWire g = gpu_wire(gpu, counter(nvlink_total, nvlink_total), counter(pcie_total, pcie_total));
      out.push_back(g);
    }
    // The pass happens between the first read and the next: from then on the counters have grown,
    // `lag_reads` reads later than the pass.
    if (reads == 1) return out;
    if (reads - 1 > lag_reads) {
      nvlink_total = nvlink_per_pass;
      pcie_total = pcie_per_pass;
    }
    return read_again(gpus);
  }
  std::vector<GpuWire> read_again(const std::vector<int>& gpus) const {
    std::vector<GpuWire> out;
    for (int gpu : gpus) out.push_back(gpu_wire(gpu, counter(nvlink_total, nvlink_total), counter(pcie_total, pcie_total)));
    return out;
  }
  Topology topology = three_gpus();
  std::optional<std::string> why_unavailable;
  double nvlink_per_pass = 0, pcie_per_pass = 0;  // each GPU's tx and rx after the pass
  int lag_reads = 0;
  int reads = 0;

 private:
  double nvlink_total = 0, pcie_total = 0;
};

Movement peer_copy() {
  return movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CopyEngine, gpu_memory(0, Allocator::Device),
                          gpu_memory(1, Allocator::Device));
}

Measurement measured(double bytes_per_op, double seconds_per_op, std::int64_t ops_per_sample) {
  Measurement m;
  m.accounting.bytes_per_op = bytes_per_op;
  m.seconds_per_op = seconds_per_op;
  m.ops_per_sample = ops_per_sample;
  return m;
}

TEST(WitnessPass, SizesOnePassAndJudgesItsCounters) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.nvlink_per_pass = 256 * kMiB;  // tx + rx over two GPUs, halved: 256 MiB
  // 64 MiB per op at 0.2 ms: 4 ops reach 256 MiB well within 10 ms; samples of 3 ops: 2 samples.
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 3), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Ok) << c->detail;
  EXPECT_DOUBLE_EQ(c->claimed_bytes, 6 * 64 * kMiB);
  ASSERT_EQ(w.runs.size(), 1u);
  EXPECT_EQ(w.runs[0].samples, 2);
  EXPECT_EQ(w.runs[0].ops, 3);
  EXPECT_EQ(c->source, "fake counters");
  EXPECT_EQ(c->settle_s, 0);
}

TEST(WitnessPass, ThePassIsBoundedByTime) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.nvlink_per_pass = 64 * kMiB;
  // 1 MiB per op at 1 ms: 10 ops in the 10 ms a pass may take, not 256.
  const auto c = witness_wire(w, ctx, peer_copy(), measured(kMiB, 1e-3, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->claimed_bytes, 10 * kMiB);
  EXPECT_EQ(c->verdict, WireVerdict::Ok);
}

// A ping-pong's op is a round trip, its message once each way, and its recorded per-op time is half
// of that: the pass claims both crossings and fits its round trips in the time bound.
TEST(WitnessPass, APingPongClaimsItsMessageEachWay) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.nvlink_per_pass = 64 * kMiB;
  const Movement pingpong = movement_between(Operation::PingPong, MoveDirection::HalfRoundTrip, Mechanism::MpiGpuAware,
                                             gpu_memory(0, Allocator::Device), gpu_memory(1, Allocator::Device));
  EXPECT_EQ(wire_crossings_per_op(pingpong), 2);
  EXPECT_EQ(wire_crossings_per_op(peer_copy()), 1);
  // 1 MiB messages at 0.5 ms a half round trip: 10 round trips in the 10 ms, 2 MiB on the wire each.
  const auto c = witness_wire(w, ctx, pingpong, measured(kMiB, 5e-4, 1), &witness);
  ASSERT_TRUE(c);
  ASSERT_EQ(w.runs.size(), 1u);
  EXPECT_EQ(w.runs[0].samples, 10);
  EXPECT_DOUBLE_EQ(c->claimed_bytes, 20 * kMiB);
  EXPECT_EQ(c->verdict, WireVerdict::Ok) << c->detail;
  // The same messages over PCIe instead: the check fails.
  FakeWorkload w2(1e-4);
  FakeWitness over_pcie;
  over_pcie.pcie_per_pass = 64 * kMiB;
  const auto failed = witness_wire(w2, ctx, pingpong, measured(kMiB, 5e-4, 1), &over_pcie);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->verdict, WireVerdict::Failed);
  EXPECT_NE(failed->detail.find("the bytes crossed PCIe, not the NVLink"), std::string::npos) << failed->detail;
}

TEST(WitnessPass, WaitsForCountersThatTrailTheCopy) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.nvlink_per_pass = 256 * kMiB;
  witness.lag_reads = 2;
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Ok) << c->detail;
  EXPECT_GT(c->settle_s, 0);
}

TEST(WitnessPass, ACopyTheCountersNeverSawFails) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.pcie_per_pass = 256 * kMiB;  // it went over PCIe
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Failed);
  EXPECT_NE(c->detail.find("crossed PCIe"), std::string::npos) << c->detail;
}

TEST(WitnessPass, BytesThatCrossedTheOtherLinkFailWithoutWaiting) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.pcie_per_pass = 128 * kMiB;  // each GPU's tx and rx: the whole 256 MiB claim, at once
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Failed);
  EXPECT_EQ(witness.reads, 2) << "read before and after the pass, and no more";
  EXPECT_EQ(c->settle_s, 0);
}

TEST(WitnessPass, PartOfTheClaimOnTheOtherLinkStillWaitsForTheDeclaredOne) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.pcie_per_pass = 80 * kMiB;  // each GPU's tx and rx: 160 MiB, 62% of the 256 MiB claim
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Failed);
  EXPECT_EQ(witness.reads, 2 + kWireMaxRereads);
  EXPECT_GT(c->settle_s, 0);
}

TEST(WitnessPass, NoCountersNoPassAndTheRecordSaysWhy) {
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  FakeWitness witness;
  witness.why_unavailable = "libnvidia-ml.so.1 not loadable (no NVIDIA driver?)";
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, WireVerdict::Unreadable);
  EXPECT_EQ(c->detail, *witness.why_unavailable);
  EXPECT_TRUE(w.runs.empty());
  EXPECT_EQ(witness.reads, 0);

  // Small messages: the pass would claim too little to judge, so it does not run.
  FakeWitness available;
  const auto small = witness_wire(w, ctx, peer_copy(), measured(8, 2e-6, 64), &available);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->verdict, WireVerdict::NotJudged);
  EXPECT_TRUE(w.runs.empty());

  // A point that crosses no link gets no wire check at all.
  const Movement local = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::SmCopy,
                                          gpu_memory(0, Allocator::Device), gpu_memory(0, Allocator::Device));
  EXPECT_FALSE(witness_wire(w, ctx, local, measured(64 * kMiB, 2e-4, 1), &available));
}

TEST(WireRecord, ResultRecordCarriesTheWireObject) {
  FakeWitness witness;
  witness.nvlink_per_pass = 256 * kMiB;
  SingleProcessGroup group;
  Context ctx(RunOptions{}, group, HostFacts{});
  FakeWorkload w(1e-4);
  const auto c = witness_wire(w, ctx, peer_copy(), measured(64 * kMiB, 2e-4, 1), &witness);
  ASSERT_TRUE(c);
  JsonWriter out;
  write_wire(out, *c);
  const std::string json = out.str();
  EXPECT_NE(json.find("\"verdict\":\"ok\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"link\":\"nvlink\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"claimed_bytes\":268435456"), std::string::npos) << json;
  EXPECT_NE(json.find("\"observed_bytes\":536870912"), std::string::npos) << json;
  EXPECT_NE(json.find("\"gpus\":[{\"gpu\":0,\"nvlink\":{\"tx_bytes\":268435456"), std::string::npos) << json;
}

// Hands the sample counts of every run it made to `runs` when it goes.
class CountedWorkload final : public FakeWorkload {
 public:
  CountedWorkload(double seconds_per_op, Accounting a, std::vector<std::int64_t>* runs)
      : FakeWorkload(seconds_per_op, std::move(a)), runs_(runs) {}
  ~CountedWorkload() override {
    if (runs_)
      for (const Call& c : runs) runs_->push_back(c.samples);
  }

 private:
  std::vector<std::int64_t>* runs_;
};

// A GPU-to-GPU copy benchmark whose bytes never reach the link counters: the runner must write an
// error record with the wire object, never a bandwidth.
class PeerCopy final : public Benchmark {
 public:
  explicit PeerCopy(std::vector<std::uint64_t> sizes = {64 << 20}, std::vector<std::int64_t>* runs = nullptr)
      : sizes_(std::move(sizes)), runs_(runs) {}
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"test.peer_copy", Category::ExplicitCopy, "test", "", Metric::Bandwidth,
                         RankRange{1, 1}, sizes_, sizes_};
  }
  Movement movement(const Context&, const Params&) const override { return peer_copy(); }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t bytes) const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes);
    a.timing = "made-up times (tests/fake_workload.h)";
    return std::make_unique<CountedWorkload>(2e-4, a, runs_);
  }

 private:
  std::vector<std::uint64_t> sizes_;
  std::vector<std::int64_t>* runs_;
};

// COMMATLAS_WIRE_FIXTURES=dir keeps a record for tests/test_wire_schema.py (tests/fixtures/wire/).
void keep_fixture(const std::string& record, const char* name) {
  const char* dir = std::getenv("COMMATLAS_WIRE_FIXTURES");
  if (!dir) return;
  std::ofstream(std::string(dir) + "/" + name) << record;
}

std::string run_with(WireWitness& witness, const Benchmark& benchmark = PeerCopy()) {
  char path[] = "/tmp/commatlas-wire-test-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  SingleProcessGroup group;
  RunOptions o;
  o.time_budget_s = 0.001;
  o.precision = 0;
  Context ctx(o, group, HostFacts{});
  WireWitness* previous = set_wire_witness(&witness);
  {
    RecordFile out(path);
    run_benchmarks({&benchmark}, ctx, &out, ProgressMode::None);
  }
  set_wire_witness(previous);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

TEST(WireRunner, ACopyOffTheWireBecomesAnErrorRecord) {
  FakeWitness silent;  // the counters gain nothing
  const std::string record = run_with(silent);
  EXPECT_NE(record.find("\"type\":\"error\""), std::string::npos) << record;
  EXPECT_NE(record.find("wire check failed: NVLink counted 0 B (0%) of 256 MiB claimed"), std::string::npos) << record;
  EXPECT_NE(record.find("\"wire\":{"), std::string::npos) << record;
  EXPECT_EQ(record.find("bandwidth_gbps"), std::string::npos) << record;
  keep_fixture(record, "error_wire_failed.json");
}

TEST(WireRunner, ACopyOnTheWireKeepsItsResultAndSaysSo) {
  FakeWitness seen;
  seen.nvlink_per_pass = 1024 * kMiB;
  const std::string record = run_with(seen);
  EXPECT_NE(record.find("\"type\":\"result\""), std::string::npos) << record;
  EXPECT_NE(record.find("\"wire\":{\"source\":\"fake counters\",\"link\":\"nvlink\""), std::string::npos) << record;
  EXPECT_NE(record.find("\"verdict\":\"ok\""), std::string::npos) << record;
  keep_fixture(record, "result_wire_ok.json");
}

// The check runs once the first op and the probe have sized a sample, before the warm-up: a copy
// off its route is neither warmed up nor timed (managed GPU-aware MPI crosses PCIe on every run).
TEST(WireRunner, ARouteThatFailsIsNotWarmedUpOrTimed) {
  std::vector<std::int64_t> failed_runs, ok_runs;
  FakeWitness silent;
  const std::string failed = run_with(silent, PeerCopy({64 << 20}, &failed_runs));
  EXPECT_NE(failed.find("wire check failed"), std::string::npos) << failed;
  // The first op (a fifth of run_with's 1 ms budget: no probe follows) and the wire pass, 256 MiB of
  // 64 MiB copies.
  EXPECT_EQ(failed_runs, (std::vector<std::int64_t>{1, 4}));
  FakeWitness seen;
  seen.nvlink_per_pass = 1024 * kMiB;
  const std::string ok = run_with(seen, PeerCopy({64 << 20}, &ok_runs));
  EXPECT_NE(ok.find("\"type\":\"result\""), std::string::npos) << ok;
  ASSERT_GT(ok_runs.size(), 4u);  // the warm-up, the timed batch and the confirmation follow the pass
  EXPECT_EQ(std::vector<std::int64_t>(ok_runs.begin(), ok_runs.begin() + 2), (std::vector<std::int64_t>{1, 4}));
}

// The route is the variant's: its counters are read once, at its largest size, and a route that
// failed there fails every size of the variant.
TEST(WireRunner, OneJudgementPerVariantCoversEverySize) {
  const PeerCopy two_sizes({64 << 20, 32 << 20});
  FakeWitness silent;
  const std::string failed = run_with(silent, two_sizes);
  EXPECT_EQ(std::count(failed.begin(), failed.end(), '\n'), 2) << failed;
  EXPECT_EQ(failed.find("\"type\":\"result\""), std::string::npos) << failed;
  EXPECT_NE(failed.find("wire check failed: NVLink counted 0 B"), std::string::npos) << failed;
  EXPECT_NE(failed.find("not measured: the wire check failed at this variant's largest size, 64 MiB"),
            std::string::npos) << failed;
  FakeWitness seen;
  seen.nvlink_per_pass = 1024 * kMiB;
  const std::string ok = run_with(seen, two_sizes);
  std::size_t wires = 0;
  for (std::size_t at = ok.find("\"wire\":{"); at != std::string::npos; at = ok.find("\"wire\":{", at + 1)) ++wires;
  EXPECT_EQ(wires, 1u) << ok;
  std::size_t results = 0;
  for (std::size_t at = ok.find("\"type\":\"result\""); at != std::string::npos;
       at = ok.find("\"type\":\"result\"", at + 1))
    ++results;
  EXPECT_EQ(results, 2u) << ok;
}

}  // namespace
}  // namespace commatlas
