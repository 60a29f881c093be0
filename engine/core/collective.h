// What a collective is, independent of the library that runs it: its name, how many elements
// each rank sends and receives for a message size, and the nccl-tests bus factor.
//
// Defined once here so NCCL, MPI and staged-GPU collectives count bytes the same way
// (nccl-tests' doc/PERFORMANCE.md): `bytes` is the size nccl-tests reports, i.e. the
// per-rank send buffer for allreduce/broadcast/reduce/reduce_scatter/alltoall and the
// per-rank receive buffer for allgather.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/movement.h"

namespace commatlas {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce };

std::string to_string(CollectiveOp op);

// busbw = algbw * factor: the bandwidth each rank's links must carry, comparable across n.
// allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce 1.
double bus_factor(CollectiveOp op, int ranks);

// The movement of a collective over every rank's buffer in `memory` (rank unset: every rank has
// one) among `participants` members of the communicator (MPI ranks, or the GPUs one process
// drives): its operation and direction (broadcast one_to_all, reduce all_to_one, the rest all_to_all).
Movement collective_movement(CollectiveOp op, Mechanism mechanism, const Endpoint& every_rank, int participants);

// Element counts of one rank's buffers for a message of `bytes` with elements of `element_size`.
struct CollectiveShape {
  std::uint64_t send_elements = 0;
  std::uint64_t recv_elements = 0;
  std::uint64_t chunk_elements = 0;  // elements per rank block (allgather, reduce_scatter, alltoall)
  std::uint64_t counted_bytes = 0;   // the size algbw divides: `bytes` rounded down to whole blocks
};

// Rounds `bytes` down to whole elements and, where data is split per rank, to whole blocks of
// `ranks` elements; nullopt when nothing is left (e.g. 8 bytes of floats over 4 ranks allgather).
std::optional<CollectiveShape> collective_shape(CollectiveOp op, std::uint64_t bytes, int ranks,
                                                std::uint64_t element_size);

}  // namespace commatlas
