#include "backends/nccl/nccl_comm.h"

#include "backends/nccl/nccl_check.h"
#include "core/error.h"
#include "core/verification.h"

namespace commatlas::nccl {

NcclComm::~NcclComm() {
  if (!comm_) return;
  // A communicator whose last operation failed may never finish a destroy: abort it instead.
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm_, &async);
  if (async != ncclSuccess)
    ncclCommAbort(comm_);
  else
    ncclCommDestroy(comm_);
}

std::string to_string(NcclLaunch launch) {
  return launch == NcclLaunch::RankPerProcess ? "rank_per_gpu" : "single_process";
}

std::vector<const cuda::Stream*> NcclTeam::streams() const {
  std::vector<const cuda::Stream*> out;
  for (const auto& m : members_) out.push_back(&m->stream);
  return out;
}

std::string NcclTeam::devices() const {
  std::string out;
  for (const auto& m : members_) out += (out.empty() ? "" : ",") + std::to_string(m->device);
  return out;
}

void NcclTeam::enqueue_phase(const std::function<void(const NcclMember&)>& part) const {
  COMMATLAS_NCCL(ncclGroupStart());
  try {
    for (const auto& m : members_) part(*m);
  } catch (...) {
    ncclGroupEnd();  // leave no group open for the next point
    throw;
  }
  COMMATLAS_NCCL(ncclGroupEnd());
}

const NcclTeam& single_process_team() {
  // Kept for the process's life on purpose (see the header); never destroyed at static teardown,
  // where the CUDA runtime may already be gone.
  static NcclTeam* team = [] {
    const int n = cuda::gpu_count();
    if (n < 1) throw Skip("no GPU visible");
    std::vector<int> devices(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) devices[i] = i;
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n), nullptr);
    COMMATLAS_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
    std::vector<std::unique_ptr<NcclMember>> members;
    for (int i = 0; i < n; ++i)
      members.push_back(std::make_unique<NcclMember>(NcclMember{i, i, NcclComm(comms[i], i), cuda::Stream(i)}));
    return new NcclTeam(NcclLaunch::SingleProcess, n, std::move(members));
  }();
  return *team;
}

RankTeamFactory& rank_per_process_team_factory() {
  static RankTeamFactory factory = nullptr;
  return factory;
}

const NcclTeam& nccl_team(NcclLaunch launch, Context& ctx) {
  if (launch == NcclLaunch::SingleProcess) return single_process_team();
  RankTeamFactory factory = rank_per_process_team_factory();
  if (!factory) throw Skip("this engine was built without MPI: NCCL with one rank per GPU needs it");
  return factory(ctx);
}

std::optional<std::string> nccl_unavailable(NcclLaunch launch, const Context& ctx, int min_gpus) {
  const int gpus = cuda::gpu_count();
  if (gpus == 0) return "no GPU visible (no device or driver)";
  if (launch == NcclLaunch::SingleProcess) {
    if (ctx.group.size() > 1) return "single-process NCCL drives every GPU from one process: run it without mpiexec";
    if (gpus < min_gpus && !test_share_gpu())
      return "needs " + std::to_string(min_gpus) + " GPUs, this machine has " + std::to_string(gpus);
    return std::nullopt;
  }
  if (!rank_per_process_team_factory()) return "this engine was built without MPI: NCCL with one rank per GPU needs it";
  if (ctx.group.kind() != "mpi") return "needs an MPI job with one rank per GPU (start the engine under mpiexec)";
  if (ctx.group.local_size() > gpus)
    return std::to_string(ctx.group.local_size()) + " ranks on this node share " + std::to_string(gpus) +
           " GPUs: NCCL needs one GPU per rank";
  return std::nullopt;
}

}  // namespace commatlas::nccl
