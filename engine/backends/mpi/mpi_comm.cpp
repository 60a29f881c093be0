#include "backends/mpi/mpi_comm.h"

#include "backends/mpi/mpi_check.h"

namespace commatlas::mpi {

MpiComm::MpiComm() {
  COMMATLAS_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  COMMATLAS_MPI(MPI_Comm_rank(comm_, &rank_));
  COMMATLAS_MPI(MPI_Comm_size(comm_, &size_));
}

MpiComm::~MpiComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiComm::barrier() const { COMMATLAS_MPI(MPI_Barrier(comm_)); }

std::optional<std::string> mpi_run_unavailable(const Context& ctx) {
  if (ctx.group.kind() != "mpi") return "needs an MPI job (start the engine under mpiexec)";
  return std::nullopt;
}

}  // namespace commatlas::mpi
