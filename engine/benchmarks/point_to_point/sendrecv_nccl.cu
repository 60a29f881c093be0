// NCCL send/recv between GPUs 0 and 1: ping-pong latency, one-way and bidirectional bandwidth,
// with one MPI rank per GPU (nccl.*, suite mpi-gpu) and from one process (nccl.single.*, suite nccl).
#include "backends/nccl/nccl_job.h"
#include "backends/nccl/nccl_p2p.h"
#include "core/registry.h"

namespace commatlas {
namespace {

struct SendRecvKind {
  const char* name;
  NcclP2p kind;
  Metric metric;
  const char* direction;  // record parameter, as the MPI protocols name it (p2p_direction)
  const char* description;
};

constexpr SendRecvKind kKinds[] = {
    {"pingpong", NcclP2p::PingPong, Metric::Latency, "half_round_trip", "NCCL send/recv ping-pong between GPUs 0 and 1, half round trip"},
    {"bandwidth", NcclP2p::OneWay, Metric::Bandwidth, "uni", "NCCL send/recv GPU 0 -> GPU 1, back to back"},
    {"bibw", NcclP2p::Bidirectional, Metric::Bandwidth, "bi", "NCCL send/recv both ways between GPUs 0 and 1 at once"},
};

class NcclSendRecv final : public Benchmark {
 public:
  NcclSendRecv(const SendRecvKind& kind, NcclLaunch launch) : kind_(kind), launch_(launch) {}

  BenchmarkInfo info() const override {
    const std::string prefix = launch_ == NcclLaunch::RankPerProcess ? "nccl." : "nccl.single.";
    return nccl_info(prefix + kind_.name, Category::PointToPoint, launch_,
                     std::string(kind_.description) + ", " + launch_words(launch_), kind_.metric, 2);
  }
  std::optional<std::string> unavailable(const Context& ctx) const override { return nccl_unavailable(launch_, ctx, 2); }
  std::vector<Params> variants(const Context& ctx) const override {
    return {Params{{"launch", to_string(launch_)},
                   {"gpus", job_devices(launch_, const_cast<Context&>(ctx))},
                   {"direction", std::string(kind_.direction)}}};
  }
  // Device buffers of GPUs 0 and 1: ranks 0 and 1 with one rank per GPU, one process otherwise.
  Movement movement(const Context&, const Params& p) const override {
    Endpoint from = gpu_memory(gpu_of_rank(p, 0), "device"), to = gpu_memory(gpu_of_rank(p, 1), "device");
    if (launch_ == NcclLaunch::RankPerProcess) {
      from.rank = 0;
      to.rank = 1;
    }
    const Operation op = kind_.kind == NcclP2p::PingPong ? Operation::PingPong : Operation::SendRecv;
    const MoveDirection d = kind_.kind == NcclP2p::PingPong ? MoveDirection::HalfRoundTrip
                            : kind_.kind == NcclP2p::Bidirectional ? MoveDirection::Bi
                                                                   : MoveDirection::Uni;
    return movement_between(op, d, Mechanism::Nccl, from, to, p, {"launch"});
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return prepare_nccl_p2p(nccl_team(launch_, ctx), ctx, kind_.kind, bytes);
  }

 private:
  const SendRecvKind& kind_;
  NcclLaunch launch_;
};

const bool registered = [] {
  for (const SendRecvKind& kind : kKinds)
    for (NcclLaunch launch : {NcclLaunch::RankPerProcess, NcclLaunch::SingleProcess})
      Registry::instance().add(std::make_unique<NcclSendRecv>(kind, launch));
  return true;
}();

}  // namespace
}  // namespace commatlas
