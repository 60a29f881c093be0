// Point-to-point MPI protocols over MessageBuffers, as the OSU micro-benchmarks define them.
//
// Ranks 0 and 1 exchange messages; any further ranks allocate nothing and time nothing, but
// still take part in the harness's broadcasts and barriers. The protocol is independent of the
// memory kind, so host, staged-GPU and GPU-aware variants share this code.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/mpi/message_buffers.h"
#include "core/benchmark.h"

namespace commatlas {

enum class P2pProtocol {
  PingPong,        // osu_latency: one op = one round trip, reported as half of it
  Unidirectional,  // osu_bw: one op = a window of messages 0 -> 1, then a short ack 1 -> 0
  Bidirectional,   // osu_bibw: one op = a window each way at once
};

// Messages in flight per window (osu_bw's default window size).
inline constexpr int kMessageWindow = 64;

struct P2pSpec {
  P2pProtocol protocol;
  MessageMemory memory;
  MessageBufferMaker make_buffers = nullptr;  // set for GPU kinds; empty: make_message_buffers(memory)
};

// The `direction` parameter of records ("uni", "bi", "half_round_trip", the movement model's
// names): a bidirectional figure sums both directions, so the report must never rank it against a
// one-way figure of the same path.
const char* p2p_direction(P2pProtocol protocol);

// The movement of `protocol` from rank 0's buffer to rank 1's (ping-pong: a half round trip).
// The endpoints get their ranks here; their memory is the caller's.
Movement p2p_movement(P2pProtocol protocol, Mechanism mechanism, Endpoint from, Endpoint to);
// MPI host buffers (malloc'd, page-aligned) of ranks 0 and 1.
Movement p2p_host_movement(P2pProtocol protocol);

// Payload bytes one operation of `protocol` counts for messages of `bytes`: a round trip counts
// one message (its time is halved), a window counts its messages, bidirectional both directions.
double p2p_bytes_per_op(P2pProtocol protocol, std::uint64_t bytes);

// Throws Skip when the size cannot be sent as one MPI message (counts are int).
std::unique_ptr<Workload> prepare_p2p_workload(Context& ctx, const P2pSpec& spec, std::uint64_t bytes);

// Why an MPI benchmark cannot run in this context (not an MPI job), or nullopt.
std::optional<std::string> mpi_run_unavailable(const Context& ctx);

}  // namespace commatlas
