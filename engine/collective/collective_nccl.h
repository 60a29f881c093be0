// The one skeleton of every NCCL collective benchmark (nccl-tests' common.cu, small): buffers
// per GPU, input filled and output poisoned, each iteration timed with CUDA events per rank,
// the slowest rank's time kept, and the output checked exactly afterwards. A collective only
// says which NCCL call it makes (nccl_collectives() below).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "backends/nccl/bare_loop.h"
#include "backends/nccl/nccl_comm.h"
#include "core/benchmark.h"
#include "core/collective.h"

namespace commatlas::nccl {

// The buffers one NCCL rank hands to the call, and how many elements its collective_shape gives.
struct NcclCollectiveCall {
  const NcclMember& member;
  const float* send;
  float* recv;
  const CollectiveShape& shape;
  int ranks;
};

struct NcclCollectiveDef {
  CollectiveOp op;
  std::function<void(const NcclCollectiveCall&)> enqueue;  // one rank's part, inside an NCCL group
};

// The root of broadcast and reduce.
inline constexpr int kCollectiveRoot = 0;

// Every NCCL collective this engine measures, one definition each (the call it makes), and the
// one of `op`; the benchmarks and the bare reference loop call the same definitions.
const std::vector<NcclCollectiveDef>& nccl_collectives();
const NcclCollectiveDef& find_nccl_collective(CollectiveOp op);  // throws std::logic_error if absent

std::unique_ptr<Workload> prepare_nccl_collective(const NcclTeam& team, Context& ctx, const NcclCollectiveDef& def,
                                                  std::uint64_t bytes, NcclTiming timing = NcclTiming::Harness);

}  // namespace commatlas::nccl
