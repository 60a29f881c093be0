// The one skeleton of every NCCL collective benchmark (nccl-tests' common.cu, small): buffers
// per GPU, input filled and output poisoned, each iteration timed with CUDA events per rank,
// the slowest rank's time kept, and the output checked exactly afterwards. A collective only
// says which NCCL call it makes (benchmarks/collective/collectives_nccl.cu).
#pragma once

#include <functional>
#include <memory>

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

std::unique_ptr<Workload> prepare_nccl_collective(const NcclTeam& team, Context& ctx, const NcclCollectiveDef& def,
                                                  std::uint64_t bytes, NcclTiming timing = NcclTiming::Harness);

}  // namespace commatlas::nccl
