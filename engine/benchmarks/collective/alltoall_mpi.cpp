// mpi.alltoall: block k of rank r's send buffer lands as block r of rank k's receive buffer.
// Size = one rank's send buffer; bus factor (n-1)/n: the part that leaves the rank.
#include "collective/collective_mpi.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas {
namespace {

double expected(std::size_t j, const CollectiveShape& s, int, int rank) {
  const std::size_t block = s.chunk_elements;
  return mpi::collective_source_value(static_cast<int>(j / block), static_cast<std::size_t>(rank) * block + j % block);
}

void run(const mpi::CollectiveCall& c) {
  const int block = static_cast<int>(c.shape.chunk_elements);
  COMMATLAS_MPI(MPI_Alltoall(c.send, block, MPI_FLOAT, c.recv, block, MPI_FLOAT, c.comm));
}

const mpi::CollectiveDefinition kAlltoall{CollectiveOp::AllToAll, "MPI_Alltoall (MPI_FLOAT)", expected, run};
COMMATLAS_REGISTER_MPI_COLLECTIVE(kAlltoall);

}  // namespace
}  // namespace commatlas
