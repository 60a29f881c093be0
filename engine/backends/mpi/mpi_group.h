// MPI as a process group: the harness's broadcast, max-over-ranks and data-check agreement
// go through MPI_COMM_WORLD here.
#pragma once

#include <memory>
#include <string>

#include "core/group.h"

namespace commatlas::mpi {

// Initialises MPI at requested_thread_level() and returns the world group; MPI_Finalize runs when
// the group is destroyed.
std::unique_ptr<Group> start_mpi_group(int* argc, char*** argv);

// The thread level the engine asks MPI for: MPI_THREAD_SINGLE unless COMMATLAS_MPI_THREAD_LEVEL
// names another (single, funneled, serialized, multiple); throws UsageError on any other value.
struct ThreadLevel {
  int level;
  std::string name;
};
ThreadLevel requested_thread_level();

// True when the process looks like it was started by an MPI launcher (mpiexec, srun, ...).
bool launched_by_mpi();

// MPI_Get_library_version, one line.
std::string mpi_library_version();

}  // namespace commatlas::mpi
