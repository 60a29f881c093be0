// The NCCL collectives: what each one calls. Everything else (buffers, timing, the exact check,
// bus factors) is the shared skeleton of backends/nccl/nccl_collective.h. Each is registered
// twice: one MPI rank per GPU (nccl.<op>, suite mpi-gpu) and one process driving every GPU
// (nccl.single.<op>, suite nccl, for machines without MPI).
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_collective.h"
#include "backends/nccl/nccl_job.h"
#include "core/registry.h"

namespace commatlas {
namespace {

const std::vector<nccl::NcclCollectiveDef>& nccl_collectives() {
  static const std::vector<nccl::NcclCollectiveDef> defs = {
      {CollectiveOp::AllReduce,
       [](const nccl::NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclAllReduce(c.send, c.recv, c.shape.send_elements, ncclFloat, ncclSum, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::AllGather,
       [](const nccl::NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclAllGather(c.send, c.recv, c.shape.send_elements, ncclFloat, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::ReduceScatter,
       [](const nccl::NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclReduceScatter(c.send, c.recv, c.shape.recv_elements, ncclFloat, ncclSum, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::AllToAll,
       // Grouped send/recv, one block to and from every rank (nccl-tests' alltoall).
       [](const nccl::NcclCollectiveCall& c) {
         const std::size_t block = c.shape.chunk_elements;
         for (int peer = 0; peer < c.ranks; ++peer) {
           COMMATLAS_NCCL(ncclSend(c.send + peer * block, block, ncclFloat, peer, c.member.comm.get(), c.member.stream.get()));
           COMMATLAS_NCCL(ncclRecv(c.recv + peer * block, block, ncclFloat, peer, c.member.comm.get(), c.member.stream.get()));
         }
       }},
      {CollectiveOp::Broadcast,
       [](const nccl::NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclBroadcast(c.send, c.recv, c.shape.send_elements, ncclFloat, nccl::kCollectiveRoot,
                                      c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::Reduce,
       [](const nccl::NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclReduce(c.send, c.recv, c.shape.send_elements, ncclFloat, ncclSum, nccl::kCollectiveRoot,
                                   c.member.comm.get(), c.member.stream.get()));
       }},
  };
  return defs;
}

class NcclCollective final : public Benchmark {
 public:
  NcclCollective(const nccl::NcclCollectiveDef& def, nccl::NcclLaunch launch) : def_(def), launch_(launch) {}

  BenchmarkInfo info() const override {
    const std::string prefix = launch_ == nccl::NcclLaunch::RankPerProcess ? "nccl." : "nccl.single.";
    return nccl::nccl_info(
        prefix + to_string(def_.op), Category::Collective, launch_,
        "NCCL " + to_string(def_.op) + " of floats, " + nccl::launch_words(launch_) + ", checked exactly",
        Metric::Bandwidth, 2);
  }
  std::optional<std::string> unavailable(const Context& ctx) const override {
    return nccl::nccl_unavailable(launch_, ctx, 2);
  }
  std::vector<Params> variants(const Context& ctx) const override {
    return {Params{{"launch", to_string(launch_)}, {"gpus", nccl::job_devices(launch_, const_cast<Context&>(ctx))}}};
  }
  Movement movement(const Context& ctx, const Params& p) const override {
    Movement m = collective_movement(def_.op, Mechanism::Nccl, gpu_memory(std::nullopt, Allocator::Device),
                                     nccl::job_size(launch_, ctx, p));
    keep_choices(m, p, {"launch"});
    return m;
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return nccl::prepare_nccl_collective(nccl::nccl_team(launch_, ctx), ctx, def_, bytes);
  }

 private:
  const nccl::NcclCollectiveDef& def_;
  nccl::NcclLaunch launch_;
};

const bool registered = [] {
  for (const nccl::NcclCollectiveDef& def : nccl_collectives())
    for (nccl::NcclLaunch launch : {nccl::NcclLaunch::RankPerProcess, nccl::NcclLaunch::SingleProcess})
      Registry::instance().add(std::make_unique<NcclCollective>(def, launch));
  return true;
}();

}  // namespace

// The bare reference loop of allreduce uses the same definition as nccl.allreduce.
const nccl::NcclCollectiveDef& nccl_allreduce_def() { return nccl_collectives().front(); }

}  // namespace commatlas
