// The point-to-point protocols written once over every transport, as the OSU micro-benchmarks
// define them: one workload whose operation is
//   PingPong   a round trip 0 -> 1 -> 0 (transfer both ways), half of it reported (osu_latency)
//   Bandwidth  a window of messages 0 -> 1 (Transport::window, osu_bw)
//   Bibw       a window each way at once (Transport::window_both, osu_bibw)
// timed by the transport's clock (or by the transport itself: Transport::run_native). Ends 0 and 1
// exchange messages; further ranks allocate nothing and time nothing, but still take part in the
// harness's votes and barriers. The source is filled once, the destination poisoned before every
// timed batch and checked after the last (core/verification.h).
#pragma once

#include <cstdint>
#include <memory>

#include "core/benchmark.h"
#include "transport/transport.h"

namespace commatlas {

// Makes the transport with `make` (on every rank, agreeing on a Skip) and the workload of
// `protocol` at `bytes` over it.
std::unique_ptr<Workload> make_protocol_workload(Context& ctx, const TransportMaker& make, const Params& params,
                                                 Protocol protocol, std::uint64_t bytes);

}  // namespace commatlas
