// mpi.broadcast: rank 0's buffer to every rank. Bus factor 1: a pipelined broadcast carries
// the whole buffer over every link once.
#include "collective/collective_mpi.h"
#include "backends/mpi/mpi_check.h"

namespace commatlas {
namespace {

constexpr int kRoot = 0;

// MPI_Bcast works in place: the root sends from its send buffer and receives nothing, the
// others receive into their receive buffer, so the data check reads only what arrived.
mpi::CollectiveLayout layout(const CollectiveShape& s, int rank) {
  const auto n = static_cast<std::size_t>(s.send_elements);
  return rank == kRoot ? mpi::CollectiveLayout{n, 0} : mpi::CollectiveLayout{0, n};
}

double expected(std::size_t j, const CollectiveShape&, int, int) { return mpi::collective_source_value(kRoot, j); }

void run(const mpi::CollectiveCall& c) {
  void* buffer = c.rank == kRoot ? const_cast<void*>(c.send) : c.recv;
  COMMATLAS_MPI(MPI_Bcast(buffer, static_cast<int>(c.shape.send_elements), MPI_FLOAT, kRoot, c.comm));
}

const mpi::CollectiveDefinition kBroadcast{CollectiveOp::Broadcast, "MPI_Bcast (MPI_FLOAT, root 0)", expected, run,
                                           layout};
COMMATLAS_REGISTER_MPI_COLLECTIVE(kBroadcast);

}  // namespace
}  // namespace commatlas
