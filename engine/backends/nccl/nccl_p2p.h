// NCCL send/recv between NCCL ranks 0 and 1 (GPUs 0 and 1): ping-pong latency, one-way and
// bidirectional bandwidth. Further ranks take part in the timing but send nothing.
#pragma once

#include <memory>

#include "backends/nccl/bare_loop.h"
#include "backends/nccl/nccl_comm.h"
#include "core/benchmark.h"

namespace commatlas {

enum class NcclP2p {
  PingPong,       // 0 -> 1, then 1 -> 0; latency is half the round trip
  OneWay,         // 0 -> 1, back to back
  Bidirectional,  // 0 -> 1 and 1 -> 0 at once, in one group
};

std::unique_ptr<Workload> prepare_nccl_p2p(const NcclTeam& team, Context& ctx, NcclP2p kind, std::uint64_t bytes,
                                           NcclTiming timing = NcclTiming::Harness);

}  // namespace commatlas
