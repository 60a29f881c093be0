// Bare nccl-tests-style loops of the same NCCL calls as nccl.allreduce and nccl.bandwidth: one
// event pair around 20 calls, no harness batching, no start-blocking kernel. Run next to them,
// they show what the harness adds (the goal: nothing beyond 3% at large sizes, 1 us at 8 B).
#include "collective/collective_nccl.h"
#include "backends/nccl/nccl_job.h"
#include "core/registry.h"
#include "transport/nccl_transport_nccl.h"
#include "transport/protocol_workload.h"

namespace commatlas {

namespace {

constexpr nccl::NcclLaunch kLaunch = nccl::NcclLaunch::RankPerProcess;

BenchmarkInfo reference_info(std::string key, std::string description) {
  BenchmarkInfo i =
      nccl::nccl_info(std::move(key), Category::Reference, kLaunch, std::move(description), Metric::Bandwidth, 2);
  i.default_sizes = {8, 64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20};  // sizes nccl.* has
  i.quick_sizes = {8, 1ull << 20, 256ull << 20};
  i.full_tier = {{{}, "self-checks of the harness (a bare loop per size), 2.3 s per point"}};
  return i;
}

class ReferenceNcclBase : public Benchmark {
 public:
  std::optional<std::string> unavailable(const Context& ctx) const override {
    return nccl::nccl_unavailable(kLaunch, ctx, 2);
  }
  std::vector<Params> variants(const Context& ctx) const override {
    return {Params{{"launch", to_string(kLaunch)}, {"gpus", nccl::job_devices(kLaunch, const_cast<Context&>(ctx))}}};
  }
};

class ReferenceNcclAllReduce final : public ReferenceNcclBase {
 public:
  Movement movement(const Context& ctx, const Params& p) const override {
    Movement m = collective_movement(CollectiveOp::AllReduce, Mechanism::Nccl,
                                     gpu_memory(std::nullopt, Allocator::Device), nccl::job_size(kLaunch, ctx, p));
    keep_choices(m, p, {"launch"});
    m.reference_of = "nccl.allreduce";
    return m;
  }
  BenchmarkInfo info() const override {
    return reference_info("reference.nccl_allreduce", "bare nccl-tests-style loop of ncclAllReduce (compare nccl.allreduce)");
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return nccl::prepare_nccl_collective(nccl::nccl_team(kLaunch, ctx), ctx,
                                         nccl::find_nccl_collective(CollectiveOp::AllReduce), bytes,
                                         nccl::NcclTiming::BareLoop);
  }
};

class ReferenceNcclSendRecv final : public ReferenceNcclBase {
 public:
  Movement movement(const Context&, const Params& p) const override {
    Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device),
             to = gpu_memory(gpu_of_rank(p, 1), Allocator::Device);
    from.rank = 0;
    to.rank = 1;
    Movement m = movement_between(Operation::SendRecv, MoveDirection::Uni, Mechanism::Nccl, from, to, p, {"launch"});
    m.reference_of = "nccl.bandwidth";
    return m;
  }
  BenchmarkInfo info() const override {
    return reference_info("reference.nccl_sendrecv", "bare nccl-tests-style loop of ncclSend/ncclRecv 0->1 (compare nccl.bandwidth)");
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return make_protocol_workload(ctx, nccl_transport(kLaunch, nccl::NcclTiming::BareLoop), Params{},
                                  Protocol::Bandwidth, bytes);
  }
};

COMMATLAS_REGISTER_BENCHMARK(ReferenceNcclAllReduce);
COMMATLAS_REGISTER_BENCHMARK(ReferenceNcclSendRecv);

}  // namespace
}  // namespace commatlas
