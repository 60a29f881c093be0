// mpi.reduce_scatter: float sum over all ranks; rank k keeps block k (MPI_Reduce_scatter_block).
// Size = the send buffer; bus factor (n-1)/n: each rank sends the blocks it does not keep.
#include "collective/collective_mpi.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas {
namespace {

double expected(std::size_t j, const CollectiveShape& s, int ranks, int rank) {
  const std::size_t source_index = static_cast<std::size_t>(rank) * s.chunk_elements + j;
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += mpi::collective_source_value(r, source_index);
  return sum;
}

void run(const mpi::CollectiveCall& c) {
  COMMATLAS_MPI(MPI_Reduce_scatter_block(c.send, c.recv, static_cast<int>(c.shape.chunk_elements), MPI_FLOAT, MPI_SUM, c.comm));
}

const mpi::CollectiveDefinition kReduceScatter{CollectiveOp::ReduceScatter,
                                               "MPI_Reduce_scatter_block (MPI_FLOAT, MPI_SUM)", expected, run};
COMMATLAS_REGISTER_MPI_COLLECTIVE(kReduceScatter);

}  // namespace
}  // namespace commatlas
