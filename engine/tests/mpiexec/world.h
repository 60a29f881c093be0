// The job's ranks, for every test of the mpiexec program (tests/mpiexec/main_mpi.cpp starts MPI).
#pragma once

#include "core/group.h"

namespace commatlas {
extern Group* world;
}  // namespace commatlas
