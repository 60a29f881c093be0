#include "core/collective.h"

namespace commatlas {

std::string to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return "allreduce";
    case CollectiveOp::AllGather: return "allgather";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::AllToAll: return "alltoall";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::Reduce: return "reduce";
  }
  return "unknown";
}

double bus_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce: return 1.0;
  }
  return 1.0;
}

std::optional<CollectiveShape> collective_shape(CollectiveOp op, std::uint64_t bytes, int ranks,
                                                std::uint64_t element_size) {
  if (ranks < 1 || element_size == 0) return std::nullopt;
  const std::uint64_t n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t elements = bytes / element_size;
  CollectiveShape s;
  switch (op) {
    case CollectiveOp::AllReduce:
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      s.send_elements = s.recv_elements = elements;
      s.chunk_elements = elements;
      break;
    case CollectiveOp::AllGather:  // bytes = the gathered output; each rank contributes a block
      s.chunk_elements = elements / n;
      s.send_elements = s.chunk_elements;
      s.recv_elements = s.chunk_elements * n;
      break;
    case CollectiveOp::ReduceScatter:  // bytes = the input; each rank keeps a reduced block
      s.chunk_elements = elements / n;
      s.send_elements = s.chunk_elements * n;
      s.recv_elements = s.chunk_elements;
      break;
    case CollectiveOp::AllToAll:  // bytes = the input; one block to every rank
      s.chunk_elements = elements / n;
      s.send_elements = s.recv_elements = s.chunk_elements * n;
      break;
  }
  if (s.chunk_elements == 0) return std::nullopt;
  const bool split = op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll;
  s.counted_bytes = (split ? s.chunk_elements * n : elements) * element_size;
  return s;
}

Movement collective_movement(CollectiveOp op, Mechanism mechanism, const Endpoint& every_rank, int participants) {
  Operation operation = Operation::Allreduce;
  MoveDirection direction = MoveDirection::AllToAll;
  switch (op) {
    case CollectiveOp::AllReduce: operation = Operation::Allreduce; break;
    case CollectiveOp::AllGather: operation = Operation::Allgather; break;
    case CollectiveOp::ReduceScatter: operation = Operation::ReduceScatter; break;
    case CollectiveOp::AllToAll: operation = Operation::Alltoall; break;
    case CollectiveOp::Broadcast:
      operation = Operation::Broadcast;
      direction = MoveDirection::OneToAll;
      break;
    case CollectiveOp::Reduce:
      operation = Operation::Reduce;
      direction = MoveDirection::AllToOne;
      break;
  }
  Movement m = movement_between(operation, direction, mechanism, every_rank, every_rank);
  m.participants = participants;
  return m;
}

}  // namespace commatlas
