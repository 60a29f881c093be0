// The mpiexec tests' program: MPI started once for every test in it (tests/mpiexec/world.h).
#include <gtest/gtest.h>

#include <memory>

#include "backends/mpi/mpi_group.h"
#include "tests/mpiexec/world.h"

namespace commatlas {
Group* world = nullptr;
}  // namespace commatlas

int main(int argc, char** argv) {
  std::unique_ptr<commatlas::Group> group = commatlas::mpi::start_mpi_group(&argc, &argv);
  commatlas::world = group.get();
  // Rank 0 reports everything; the others only their failures (gtest's --gtest_brief).
  if (group->rank() != 0) ::testing::GTEST_FLAG(brief) = true;
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  // A failure on any rank fails every rank's exit code, and mpiexec's with it.
  return group->all(failed == 0) ? 0 : 1;
}
