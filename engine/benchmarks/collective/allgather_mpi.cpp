// mpi.allgather: every rank contributes one block and receives all n of them.
// Size = the gathered buffer; bus factor (n-1)/n: each rank receives the blocks it does not own.
#include "collective/collective_mpi.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas {
namespace {

double expected(std::size_t j, const CollectiveShape& s, int, int) {
  const std::size_t block = s.chunk_elements;
  return mpi::collective_source_value(static_cast<int>(j / block), j % block);
}

void run(const mpi::CollectiveCall& c) {
  const int block = static_cast<int>(c.shape.chunk_elements);
  COMMATLAS_MPI(MPI_Allgather(c.send, block, MPI_FLOAT, c.recv, block, MPI_FLOAT, c.comm));
}

const mpi::CollectiveDefinition kAllgather{CollectiveOp::AllGather, "MPI_Allgather (MPI_FLOAT)", expected, run};
COMMATLAS_REGISTER_MPI_COLLECTIVE(kAllgather);

}  // namespace
}  // namespace commatlas
