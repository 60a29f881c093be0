// The one skeleton every MPI collective benchmark runs through (nccl-tests style): a
// collective is a small CollectiveDefinition (the call and the expected result) in its own file
// under benchmarks/collective/; timing, max over ranks, data check and records come from here.
//
// Sizes and bus factors are core/collective.h's, shared with NCCL: the size of a point is the
// buffer nccl-tests reports (allreduce, broadcast, reduce_scatter, alltoall: the send buffer;
// allgather: the gathered receive buffer), rounded down to whole elements and, where the
// data is split per rank, to whole blocks of `ranks` elements; the record's bytes_per_op is that
// rounded size. algbw = size / time, busbw = algbw x bus_factor(op, n).
//
// Every element is a float holding a small whole number (collective_source_value), so sums over
// any realistic rank count are exact and each result is checked for equality, not tolerance.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/message_buffers.h"
#include "core/benchmark.h"
#include "core/collective.h"
#include "core/registry.h"

namespace commatlas::mpi {

using CollectiveElement = float;
inline constexpr std::size_t kCollectiveElementBytes = sizeof(CollectiveElement);

// Elements of this rank's send and receive buffers.
struct CollectiveLayout {
  std::size_t send_elements = 0;
  std::size_t recv_elements = 0;
};

// One call of the collective.
struct CollectiveCall {
  const void* send;
  void* recv;
  const CollectiveShape& shape;
  int ranks;
  int rank;
  MPI_Comm comm;
};

struct CollectiveDefinition {
  CollectiveOp op;       // the benchmark key is "mpi.<to_string(op)>"
  std::string mpi_call;  // "MPI_Allreduce (MPI_FLOAT, MPI_SUM)", for descriptions
  // Receive element j of `rank`, when every rank r sent collective_source_value(r, i) at send index i.
  double (*expected)(std::size_t j, const CollectiveShape& shape, int ranks, int rank);
  void (*run)(const CollectiveCall& call);
  // This rank's buffers when they differ from the shape's (in-place calls such as MPI_Bcast);
  // nullptr: send and receive elements as core/collective.h sizes them.
  CollectiveLayout (*layout)(const CollectiveShape& shape, int rank) = nullptr;
};

// Send element i of `rank`: a whole number in [0, 1020], so a sum over n ranks is exact in a
// float while n * 1020 < 2^24.
CollectiveElement collective_source_value(int rank, std::size_t i);

// Every collective registered with COMMATLAS_REGISTER_MPI_COLLECTIVE (for tests and for the
// GPU-buffer variants, which run the same definitions over other memory kinds).
std::vector<const CollectiveDefinition*>& mpi_collectives();
const CollectiveDefinition* find_mpi_collective(CollectiveOp op);

// The benchmark of one definition over one memory kind.
class MpiCollectiveBenchmark final : public Benchmark {
 public:
  MpiCollectiveBenchmark(const CollectiveDefinition& definition, MessageMemory memory)
      : definition_(definition), memory_(memory) {}
  BenchmarkInfo info() const override;
  std::optional<std::string> unavailable(const Context& ctx) const override;
  Movement movement(const Context& ctx, const Params& params) const override;
  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override;

 private:
  const CollectiveDefinition& definition_;
  MessageMemory memory_;
};

bool register_mpi_collective(const CollectiveDefinition& definition);

// The workload of `definition` at `bytes` over buffers from `make` (the GPU-buffer variants,
// benchmarks/collective/collectives_gpu_mpi.cu). Throws Skip for sizes MPI cannot count.
std::unique_ptr<Workload> prepare_collective_workload(Context& ctx, const CollectiveDefinition& definition,
                                                      const MessageBufferMaker& make, std::uint64_t bytes);

}  // namespace commatlas::mpi

#define COMMATLAS_REGISTER_MPI_COLLECTIVE(definition)                       \
  static const bool COMMATLAS_CONCAT(commatlas_mpi_collective_, __LINE__) = \
      ::commatlas::mpi::register_mpi_collective(definition)
