#include "backends/nccl/nccl_p2p.h"

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_job.h"
#include "core/all_ranks.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

constexpr int kOrigin = 0;
constexpr int kPeer = 1;

// Each sender's bytes carry its own seed: a receiver holding its own bytes, or stale ones, fails.
std::uint64_t sender_seed(std::uint64_t run_seed, int rank) { return run_seed * 7919ull + static_cast<std::uint64_t>(rank) + 11; }

bool sends(NcclP2p kind, int rank) { return rank == kOrigin || (rank == kPeer && kind != NcclP2p::OneWay); }
bool receives(NcclP2p kind, int rank) { return rank == kPeer || (rank == kOrigin && kind != NcclP2p::OneWay); }

struct PairBuffers {
  const NcclMember* member;
  GpuBuffer send;
  GpuBuffer recv;
};

class NcclP2pWorkload final : public Workload {
 public:
  NcclP2pWorkload(const NcclTeam& team, Context& ctx, NcclP2p kind, std::size_t bytes, NcclTiming timing)
      : team_(team), kind_(kind), bytes_(bytes), allocated_(bytes), timing_(timing), seed_(ctx.options.seed) {
    buffers_ = make_on_all_ranks(ctx.group, [&] {
      std::vector<std::unique_ptr<PairBuffers>> made;
      for (const auto& m : team_.members()) {
        if (m->rank != kOrigin && m->rank != kPeer) continue;
        made.push_back(std::make_unique<PairBuffers>(PairBuffers{m.get(),
            GpuBuffer(MemoryKind::Device, sends(kind, m->rank) ? bytes : 0, m->device),
            GpuBuffer(MemoryKind::Device, receives(kind, m->rank) ? bytes : 0, m->device)}));
      }
      return made;
    });
    for (const auto& b : buffers_) {
      DeviceScope scope(b->member->device);
      if (b->send.bytes()) fill_pattern_on_device(b->send.data(), bytes_, sender_seed(seed_, b->member->rank), b->member->stream.get());
      b->member->stream.synchronize();
    }
    connect_and_poison();
  }

  // Inside the buffers of the largest size: the sent pattern is a function of the byte's index, so
  // its prefix is the smaller message. Every rank compares with the same allocated size.
  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    connect_and_poison();
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    a.min_sample_s = kEventClockMinSampleSeconds;
    a.bytes_per_op = static_cast<double>(bytes_) * (kind_ == NcclP2p::Bidirectional ? 2 : 1);
    const std::string how = launch_words(team_.launch());
    switch (kind_) {
      case NcclP2p::PingPong:
        a.timing = "CUDA events on rank 0's stream around a batch of round trips enqueued as they come (Immediate: "
                   "launch cost included); per-op time halved; " + how;
        a.latency_includes = "half a round trip of NCCL send/recv between GPUs 0 and 1 (two NCCL groups: 0->1 "
                             "ncclSend/ncclRecv, then 1->0), kernel launches included, " + how;
        break;
      case NcclP2p::OneWay:
        a.timing = "CUDA events per rank around back-to-back ncclSend 0->1 / ncclRecv calls queued behind a "
                   "start-blocking kernel (BlockedStart); per iteration the slowest rank's time; " + how;
        a.latency_includes = "one ncclSend/ncclRecv pair 0->1 (one NCCL group per rank), GPU time back-to-back, " + how;
        a.max_over_ranks = true;
        break;
      case NcclP2p::Bidirectional:
        a.timing = "CUDA events per rank around back-to-back grouped ncclSend+ncclRecv each way, queued behind a "
                   "start-blocking kernel (BlockedStart); per iteration the slowest rank's time; " + how;
        a.latency_includes = "one NCCL group per rank sending to and receiving from the other at once, both "
                             "directions counted, " + how;
        a.max_over_ranks = true;
        break;
    }
    if (timing_ == NcclTiming::BareLoop) {
      a.timing = "bare loop as nccl-tests: one CUDA event pair per rank around " + std::to_string(kBareIterations) +
                 " calls enqueued as they come (no start-blocking kernel, no harness batching); per sample the "
                 "slowest rank's time; " + how;
      a.latency_includes += " (pipelined loop: launches overlap the previous call)";
      a.one_op_per_sample = true;
    }
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const auto streams = team_.streams();
    const std::size_t first = seconds.size();
    if (timing_ == NcclTiming::BareLoop) {
      if (streams.size() != 1 || kind_ == NcclP2p::PingPong)
        throw MeasurementError("the bare reference loop times one-way or bidirectional transfers, one GPU per process");
      return time_bare_loop(*streams[0], samples, seconds, [&] { one_op(); });
    }
    const LaunchMode mode = kind_ == NcclP2p::PingPong ? LaunchMode::Immediate : LaunchMode::BlockedStart;
    time_event_samples(streams, samples, ops, seconds, [&](std::size_t s) {
      if (s + 1 == streams.size()) one_op();
    }, mode);
    if (kind_ == NcclP2p::PingPong)
      for (std::size_t i = first; i < seconds.size(); ++i) seconds[i] /= 2;
  }

  Verification verify() override {
    std::uint64_t checked = 0;
    for (const auto& b : buffers_) {
      if (!b->recv.bytes()) continue;
      const int from = b->member->rank == kOrigin ? kPeer : kOrigin;
      DeviceScope scope(b->member->device);
      const std::size_t bad = find_mismatch_on_device(b->recv.data(), bytes_, sender_seed(seed_, from), b->member->stream.get());
      checked += bytes_;
      if (bad != bytes_)
        return {false, checked, "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " received by NCCL rank " +
                                    std::to_string(b->member->rank) + " differs from what rank " + std::to_string(from) + " sent"};
    }
    return {true, checked, ""};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  // On the receiving member's own stream, so its next ncclRecv is ordered after the poison.
  void prepare_batch() override {
    for (const auto& b : buffers_) {
      if (!b->recv.bytes()) continue;
      DeviceScope scope(b->member->device);
      poison_on_device(b->recv.data(), bytes_, b->member->stream.get());
      b->member->stream.synchronize();
    }
  }

  // NCCL connects a peer pair on its first send/recv (and a smaller size may take another
  // protocol): let that happen untimed, without a start-blocking kernel ahead of it, then poison
  // what it delivered.
  void connect_and_poison() {
    one_op();
    for (const auto& m : team_.members()) m->stream.synchronize();
    for (const auto& b : buffers_) {
      DeviceScope scope(b->member->device);
      if (b->recv.bytes()) poison_on_device(b->recv.data(), bytes_, b->member->stream.get());
      b->member->stream.synchronize();
    }
  }

  const PairBuffers* buffers_of(const NcclMember& m) const {
    for (const auto& b : buffers_)
      if (b->member == &m) return b.get();
    return nullptr;
  }

  // Sends from `from` to `to` in this phase: each member enqueues its side.
  void transfer(int from, int to, bool both_ways) const {
    team_.enqueue_phase([&](const NcclMember& m) {
      const PairBuffers* b = buffers_of(m);
      if (!b) return;
      const int other = m.rank == kOrigin ? kPeer : kOrigin;
      if (m.rank == from || both_ways)
        COMMATLAS_NCCL(ncclSend(b->send.data(), bytes_, ncclUint8, other, m.comm.get(), m.stream.get()));
      if (m.rank == to || both_ways)
        COMMATLAS_NCCL(ncclRecv(b->recv.data(), bytes_, ncclUint8, other, m.comm.get(), m.stream.get()));
    });
  }

  void one_op() const {
    if (planted_no_move()) return;  // test-only (COMMATLAS_TEST_SKIP_MOVE)
    switch (kind_) {
      case NcclP2p::PingPong:
        transfer(kOrigin, kPeer, false);
        transfer(kPeer, kOrigin, false);
        return;
      case NcclP2p::OneWay: return transfer(kOrigin, kPeer, false);
      case NcclP2p::Bidirectional: return transfer(kOrigin, kPeer, true);
    }
  }

  const NcclTeam& team_;
  NcclP2p kind_;
  std::size_t bytes_;
  std::size_t allocated_;  // the message size the buffers were made for
  NcclTiming timing_;
  std::uint64_t seed_;
  std::vector<std::unique_ptr<PairBuffers>> buffers_;
};

}  // namespace

std::unique_ptr<Workload> prepare_nccl_p2p(const NcclTeam& team, Context& ctx, NcclP2p kind, std::uint64_t bytes,
                                           NcclTiming timing) {
  if (team.ranks() < 2) throw Skip("NCCL send/recv needs 2 ranks, the job has " + std::to_string(team.ranks()));
  return std::make_unique<NcclP2pWorkload>(team, ctx, kind, static_cast<std::size_t>(bytes), timing);
}

}  // namespace commatlas
