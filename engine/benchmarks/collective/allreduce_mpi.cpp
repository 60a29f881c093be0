// mpi.allreduce: float sum over all ranks; every rank ends with the whole reduced buffer.
// Bus factor 2(n-1)/n (core/collective.h): a bandwidth-optimal allreduce is a reduce-scatter
// plus an allgather, each moving (n-1)/n of the buffer through every rank.
#include "collective/collective_mpi.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas {
namespace {

double expected(std::size_t j, const CollectiveShape&, int ranks, int) {
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += mpi::collective_source_value(r, j);
  return sum;
}

void run(const mpi::CollectiveCall& c) {
  COMMATLAS_MPI(MPI_Allreduce(c.send, c.recv, static_cast<int>(c.shape.send_elements), MPI_FLOAT, MPI_SUM, c.comm));
}

const mpi::CollectiveDefinition kAllreduce{CollectiveOp::AllReduce, "MPI_Allreduce (MPI_FLOAT, MPI_SUM)", expected,
                                           run};
COMMATLAS_REGISTER_MPI_COLLECTIVE(kAllreduce);

}  // namespace
}  // namespace commatlas
