// A communicator of the benchmark's own, duplicated from MPI_COMM_WORLD.
//
// Benchmark traffic runs on a duplicate so that its messages can never match the harness's
// broadcasts and reductions on MPI_COMM_WORLD, nor a message left over from another workload.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "core/context.h"

namespace commatlas::mpi {

class MpiComm {
 public:
  // Collective over MPI_COMM_WORLD: every rank must construct it, in the same order.
  MpiComm();
  ~MpiComm();
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  void barrier() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// Why an MPI benchmark cannot run in this context (not an MPI job), or nullopt.
std::optional<std::string> mpi_run_unavailable(const Context& ctx);

}  // namespace commatlas::mpi
