// NCCL with one MPI rank per GPU: the unique id travels over MPI, then ncclCommInitRank.
#include <mpi.h>

#include "backends/mpi/mpi_check.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_comm.h"
#include "core/affinity.h"
#include "core/error.h"

namespace commatlas::nccl {
namespace {

const NcclTeam& rank_per_process_team(Context& ctx) {
  // Made once, collectively: every rank reaches its first NCCL benchmark in the same order.
  static NcclTeam* team = [&ctx] {
    const int device = ctx.group.local_rank() % cuda::gpu_count();
    ncclUniqueId id{};
    if (ctx.group.rank() == 0) COMMATLAS_NCCL(ncclGetUniqueId(&id));
    COMMATLAS_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    ncclComm_t comm = nullptr;
    {
      cuda::DeviceScope scope(device);
      HelperThreadScope helpers;  // NCCL's proxy threads get the rank's cores, not the measuring one
      COMMATLAS_NCCL(ncclCommInitRank(&comm, ctx.group.size(), id, ctx.group.rank()));
    }
    std::vector<std::unique_ptr<NcclMember>> members;
    members.push_back(std::make_unique<NcclMember>(
        NcclMember{ctx.group.rank(), device, NcclComm(comm, device), cuda::Stream(device)}));
    return new NcclTeam(NcclLaunch::RankPerProcess, ctx.group.size(), std::move(members));
  }();
  return *team;
}

const bool registered = [] {
  rank_per_process_team_factory() = &rank_per_process_team;
  return true;
}();

}  // namespace
}  // namespace commatlas::nccl
