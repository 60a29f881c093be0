// NCCL send/recv as a transport:
//   nccl.{pingpong,bandwidth,bibw}         one MPI rank per GPU (suite mpi-gpu)
//   nccl.single.{pingpong,bandwidth,bibw}  one process driving every GPU (suite nccl)
//   pattern.*.nccl                         one MPI rank per GPU: a step's messages as
//                                          ncclSend/ncclRecv in one NCCL group, the counts of the
//                                          irregular exchange the same way (then copied to the
//                                          host, where the application sizes its receives),
//                                          buckets as ncclAllReduce enqueued back to back
// NCCL ranks 0 and 1 are the protocols' ends; further ranks take part in the timing but send
// nothing. Ping-pong is two NCCL groups (0 -> 1, then 1 -> 0) enqueued as they come; bandwidth and
// bibw are back to back behind a start-blocking kernel, the slowest member's time per iteration.
#include "transport/nccl_transport_nccl.h"

#include <algorithm>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_job.h"
#include "core/error.h"
#include "transport/device_arena.h"

namespace commatlas {
namespace {

// NCCL has no tags: messages between two ranks match in the order they are issued. Ordering both
// sides by tag pairs each send with its receive (two faces can go to the same rank).
std::vector<PeerMessage> by_tag(std::vector<PeerMessage> messages) {
  std::stable_sort(messages.begin(), messages.end(), [](const PeerMessage& a, const PeerMessage& b) { return a.tag < b.tag; });
  return messages;
}

class NcclTransport final : public Transport {
 public:
  // One arena per member this process drives, on the member's GPU: its send and receive buffers
  // (empty on members past the protocols' two ends, unless the process drives one member: the
  // pattern's rank).
  NcclTransport(const nccl::NcclTeam& team, nccl::NcclTiming timing, std::size_t send_bytes, std::size_t recv_bytes)
      : team_(team), timing_(timing) {
    const bool one = team_.members().size() == 1;
    for (const auto& m : team_.members()) {
      const bool end = one || m->rank == kOriginEnd || m->rank == kPeerEnd;
      arenas_.push_back(std::make_unique<DeviceArena>(m->device, end ? send_bytes : 0, end ? recv_bytes : 0));
    }
    counts_ = static_cast<std::uint64_t*>(arenas_.front()->allocate(2 * kMaxPeers * 8));
  }

  TransportClock clock() const override { return TransportClock::Stream; }
  std::string describe() const override {
    return "device buffers of GPU " + std::to_string(arenas_.front()->device()) + ", NCCL (one MPI rank per GPU)";
  }
  bool max_over_ends(Protocol p) const override { return p != Protocol::PingPong; }
  double min_sample_s() const override { return cuda::kEventClockMinSampleSeconds; }
  bool one_op_per_sample(Protocol) const override { return timing_ == nccl::NcclTiming::BareLoop; }
  std::optional<double> host_enqueue_s() const override { return bare_.host_enqueue_s(); }
  std::vector<int> local_ends() const override {
    std::vector<int> out;
    for (const auto& m : team_.members())
      if (m->rank == kOriginEnd || m->rank == kPeerEnd) out.push_back(m->rank);
    return out;
  }

  ProtocolWords words(Protocol p) const override {
    const std::string how = nccl::launch_words(team_.launch());
    ProtocolWords w;
    switch (p) {
      case Protocol::PingPong:
        w = {"CUDA events on rank 0's stream around a batch of round trips enqueued as they come (Immediate: "
             "launch cost included); per-op time halved; " + how,
             "half a round trip of NCCL send/recv between GPUs 0 and 1 (two NCCL groups: 0->1 "
             "ncclSend/ncclRecv, then 1->0), kernel launches included, " + how};
        break;
      case Protocol::Bandwidth:
        w = {"CUDA events per rank around back-to-back ncclSend 0->1 / ncclRecv calls queued behind a "
             "start-blocking kernel (BlockedStart); per iteration the slowest rank's time; " + how,
             "one ncclSend/ncclRecv pair 0->1 (one NCCL group per rank), GPU time back-to-back, " + how};
        break;
      case Protocol::Bibw:
        w = {"CUDA events per rank around back-to-back grouped ncclSend+ncclRecv each way, queued behind a "
             "start-blocking kernel (BlockedStart); per iteration the slowest rank's time; " + how,
             "one NCCL group per rank sending to and receiving from the other at once, both "
             "directions counted, " + how};
        break;
    }
    if (timing_ == nccl::NcclTiming::BareLoop) {
      w.timing = "bare loop as nccl-tests: one CUDA event pair per rank around " +
                 std::to_string(nccl::kBareIterations) +
                 " calls enqueued as they come (no start-blocking kernel, no harness batching); per sample the "
                 "slowest rank's time; " +
                 how;
      w.latency_includes += " (pipelined loop: launches overlap the previous call)";
    }
    return w;
  }

  void fill_send(int end, std::size_t bytes, std::uint64_t seed) override {
    const auto [m, a] = of(end);
    cuda::DeviceScope scope(m->device);
    cuda::fill_pattern_on_device(a->send(), bytes, seed, m->stream.get());
    m->stream.synchronize();
  }
  // On the receiving member's own stream, so its next ncclRecv is ordered after the poison.
  void poison_recv(int end, std::size_t bytes) override {
    const auto [m, a] = of(end);
    cuda::DeviceScope scope(m->device);
    cuda::poison_on_device(a->recv(), bytes, m->stream.get());
    m->stream.synchronize();
  }
  std::size_t check_recv(int end, std::size_t bytes, std::uint64_t seed) override {
    const auto [m, a] = of(end);
    cuda::DeviceScope scope(m->device);
    return cuda::find_mismatch_on_device(a->recv(), bytes, seed, m->stream.get());
  }
  // NCCL connects a peer pair on its first send/recv (and a smaller size may take another
  // protocol): let that happen untimed, without a start-blocking kernel ahead of it.
  void connect(const std::function<void()>& one_op) override {
    one_op();
    for (const auto& m : team_.members()) m->stream.synchronize();
  }

  void transfer(int from, int to, std::size_t bytes) override { phase(from, to, false, bytes); }
  void window(int from, int to, std::size_t bytes) override { phase(from, to, false, bytes); }
  void window_both(int a, int b, std::size_t bytes) override { phase(a, b, true, bytes); }

  void time(Protocol p, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
            const std::function<void()>& op) override {
    const auto streams = team_.streams();
    if (timing_ == nccl::NcclTiming::BareLoop) {
      if (streams.size() != 1 || p == Protocol::PingPong)
        throw MeasurementError("the bare reference loop times one-way or bidirectional transfers, one GPU per process");
      return bare_.time(*streams[0], samples, seconds, op);
    }
    cuda::time_event_samples(
        streams, samples, ops, seconds,
        [&](std::size_t s) {
          if (s + 1 == streams.size()) op();
        },
        p == Protocol::PingPong ? cuda::LaunchMode::Immediate : cuda::LaunchMode::BlockedStart);
  }

  // The pattern's memory: the first member's (the rank's own GPU, one MPI rank per GPU).
  void* send_home() override { return arenas_.front()->send(); }
  void* recv_home() override { return arenas_.front()->recv(); }
  void* allocate(std::size_t bytes) override { return arenas_.front()->allocate(bytes); }
  void upload(void* dst, const void* host, std::size_t bytes) override { arenas_.front()->upload(dst, host, bytes); }
  void download(void* host, const void* src, std::size_t bytes) override { arenas_.front()->download(host, src, bytes); }
  void fill(void* dst, unsigned char byte, std::size_t bytes) override { arenas_.front()->fill(dst, byte, bytes); }
  void pack(const HaloGeometry& g, const double* grid, void* send) override { arenas_.front()->pack(g, grid, send); }
  void unpack(const HaloGeometry& g, const void* recv, double* grid) override { arenas_.front()->unpack(g, recv, grid); }

  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    grouped(static_cast<const unsigned char*>(send_home()), static_cast<unsigned char*>(recv_home()), by_tag(sends),
            by_tag(recvs));
    member().stream.synchronize();
  }

  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override {
    if (sends.size() > kMaxPeers || recvs.size() > kMaxPeers) throw MeasurementError("more neighbours than NCCL count slots");
    std::vector<PeerMessage> s = sends, r = recvs;
    for (std::size_t i = 0; i < s.size(); ++i) s[i].offset = i * 8, s[i].bytes = 8;
    for (std::size_t i = 0; i < r.size(); ++i) r[i].offset = (kMaxPeers + i) * 8, r[i].bytes = 8;
    const nccl::NcclMember& m = member();
    cuda::DeviceScope scope(m.device);
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(counts_, send_counts.data(), s.size() * 8, cudaMemcpyHostToDevice, m.stream.get()));
    auto* base = reinterpret_cast<unsigned char*>(counts_);
    grouped(base, base, by_tag(s), by_tag(r));
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(recv_counts.data(), counts_ + kMaxPeers, r.size() * 8, cudaMemcpyDeviceToHost,
                                        m.stream.get()));
    m.stream.synchronize();
  }

  void allreduce(const float* send, float* recv, std::size_t count) override {
    const nccl::NcclMember& m = member();
    cuda::DeviceScope scope(m.device);
    COMMATLAS_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, m.comm.get(), m.stream.get()));
  }
  void finish() override { member().stream.synchronize(); }

 private:
  static constexpr std::size_t kMaxPeers = 32;

  const nccl::NcclMember& member() const { return *team_.members().front(); }

  // The member playing `end` and its buffers.
  std::pair<const nccl::NcclMember*, DeviceArena*> of(int end) const {
    for (std::size_t i = 0; i < team_.members().size(); ++i)
      if (team_.members()[i]->rank == end) return {team_.members()[i].get(), arenas_[i].get()};
    throw MeasurementError("this process drives no NCCL rank " + std::to_string(end));
  }

  // Sends from `from` to `to` in this phase (both ways with `both_ways`): each member of the pair
  // enqueues its side, inside one NCCL group for every member this process drives.
  void phase(int from, int to, bool both_ways, std::size_t bytes) const {
    team_.enqueue_phase([&](const nccl::NcclMember& m) {
      if (m.rank != kOriginEnd && m.rank != kPeerEnd) return;
      const DeviceArena* a = of(m.rank).second;
      const int other = m.rank == kOriginEnd ? kPeerEnd : kOriginEnd;
      if (m.rank == from || both_ways)
        COMMATLAS_NCCL(ncclSend(a->send(), bytes, ncclUint8, other, m.comm.get(), m.stream.get()));
      if (m.rank == to || both_ways)
        COMMATLAS_NCCL(ncclRecv(a->recv(), bytes, ncclUint8, other, m.comm.get(), m.stream.get()));
    });
  }

  void grouped(const unsigned char* send, unsigned char* recv, const std::vector<PeerMessage>& sends,
               const std::vector<PeerMessage>& recvs) {
    const nccl::NcclMember& m = member();
    cuda::DeviceScope scope(m.device);
    COMMATLAS_NCCL(ncclGroupStart());
    for (const PeerMessage& msg : recvs)
      COMMATLAS_NCCL(ncclRecv(recv + msg.offset, msg.bytes, ncclUint8, msg.peer, m.comm.get(), m.stream.get()));
    for (const PeerMessage& msg : sends)
      COMMATLAS_NCCL(ncclSend(send + msg.offset, msg.bytes, ncclUint8, msg.peer, m.comm.get(), m.stream.get()));
    COMMATLAS_NCCL(ncclGroupEnd());
  }

  const nccl::NcclTeam& team_;
  nccl::NcclTiming timing_;
  nccl::BareLoop bare_;  // the clock of NcclTiming::BareLoop
  std::vector<std::unique_ptr<DeviceArena>> arenas_;  // one per member, in members() order
  std::uint64_t* counts_ = nullptr;
};

// What one operation is, in the order of Protocol's values.
constexpr const char* kProtocolWords[] = {
    "NCCL send/recv ping-pong between GPUs 0 and 1, half round trip",
    "NCCL send/recv GPU 0 -> GPU 1, back to back",
    "NCCL send/recv both ways between GPUs 0 and 1 at once",
};
const char* protocol_words(Protocol p) { return kProtocolWords[static_cast<int>(p)]; }

TransportSpec nccl_spec(nccl::NcclLaunch launch) {
  const std::string prefix = launch == nccl::NcclLaunch::RankPerProcess ? "nccl." : "nccl.single.";
  std::vector<ProtocolBenchmark> protocols;
  for (Protocol p : kProtocols)
    protocols.push_back({p, nccl::nccl_info(prefix + protocol_name(p), Category::PointToPoint, launch,
                                            std::string(protocol_words(p)) + ", " + nccl::launch_words(launch),
                                            protocol_metric(p), 2)});
  TransportSpec spec{Mechanism::Nccl, launch == nccl::NcclLaunch::RankPerProcess ? "mpi-gpu" : "nccl",
                     [launch](const Context& ctx) { return nccl::nccl_unavailable(launch, ctx, 2); },
                     nccl_transport(launch), protocols};
  spec.variants = [launch](const Context& ctx, Protocol p) {
    return std::vector<Params>{Params{{"launch", to_string(launch)},
                                      {"gpus", nccl::job_devices(launch, const_cast<Context&>(ctx))},
                                      {"direction", std::string(p2p_direction(p))}}};
  };
  // Device buffers of GPUs 0 and 1: ranks 0 and 1 with one rank per GPU, one process otherwise.
  spec.movement = [launch](const Context&, const Params& p, Protocol protocol) {
    Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device),
             to = gpu_memory(gpu_of_rank(p, 1), Allocator::Device);
    if (launch == nccl::NcclLaunch::RankPerProcess) {
      from.rank = 0;
      to.rank = 1;
    }
    const Operation op = protocol == Protocol::PingPong ? Operation::PingPong : Operation::SendRecv;
    const MoveDirection d = protocol == Protocol::PingPong ? MoveDirection::HalfRoundTrip
                            : protocol == Protocol::Bibw   ? MoveDirection::Bi
                                                           : MoveDirection::Uni;
    return movement_between(op, d, Mechanism::Nccl, from, to, p, {"launch"});
  };
  if (launch == nccl::NcclLaunch::RankPerProcess)
    spec.patterns = PatternSide{
        "nccl", true, true, [](const Context& ctx) { return ctx.group.local_rank() % std::max(cuda::gpu_count(), 1); },
        nullptr};
  return spec;
}

const bool registered = register_transport(nccl_spec(nccl::NcclLaunch::RankPerProcess)) &&
                        register_transport(nccl_spec(nccl::NcclLaunch::SingleProcess));

}  // namespace

TransportMaker nccl_transport(nccl::NcclLaunch launch, nccl::NcclTiming timing) {
  return [launch, timing](Context& ctx, const Params&, std::size_t s, std::size_t r) -> std::unique_ptr<Transport> {
    const nccl::NcclTeam& team = nccl::nccl_team(launch, ctx);
    if (team.ranks() < 2) throw Skip("NCCL send/recv needs 2 ranks, the job has " + std::to_string(team.ranks()));
    return std::make_unique<NcclTransport>(team, timing, s, r);
  };
}

}  // namespace commatlas
