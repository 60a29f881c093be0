// The transport layer: how messages move between the two ends of a point-to-point protocol, or
// between the ranks of an application pattern, whatever library moves them.
//
// Ping-pong (osu_latency), window bandwidth (osu_bw), bidirectional bandwidth (osu_bibw) and the
// application patterns (halo, neighbour exchange, bucketed allreduce) are written once, against
// Transport:
//   transport/protocol_workload.h             the three point-to-point protocols (registered as
//                                             benchmarks by benchmarks/point_to_point/protocols.cpp)
//   benchmarks/pattern/patterns_mpi.cpp       the patterns
// and every transport registered with register_transport() gets each of them that it supports.
// A transport is one file (its code and its registration) plus its test: docs/adding-a-mechanism.md.
//
// Two kinds of primitive, with different completion rules:
//   * protocol primitives (transfer, window, window_both) follow the transport's clock: on a Host
//     clock they return when this process's part is done (MPI_Send returned); on a Stream clock
//     they only enqueue on the transport's streams, and time() records CUDA events around them;
//   * pattern primitives (exchange, exchange_counts, pack, unpack, ...) are done on return (a
//     pattern step is host-timed by the slowest rank), allreduce may stay in flight until finish().
// A transport that runs a whole protocol itself (a persistent kernel doing every round trip of a
// batch, nothing launched inside the timed loop) overrides run_native(); the generic loop defers
// to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"
#include "core/movement.h"
#include "core/params.h"

namespace commatlas {

struct HaloGeometry;  // transport/geometry.h: the faces a halo pattern packs

// The two ends of a point-to-point protocol: ranks 0 and 1 (NCCL ranks 0 and 1 when one process
// drives both GPUs).
inline constexpr int kOriginEnd = 0;
inline constexpr int kPeerEnd = 1;

// The point-to-point protocols, as the OSU micro-benchmarks define them.
enum class Protocol {
  PingPong,   // one op = a round trip 0 -> 1 -> 0, reported as half of it (osu_latency)
  Bandwidth,  // one op = a window of messages 0 -> 1 (osu_bw)
  Bibw,       // one op = a window each way at once (osu_bibw)
};

// Which clock times a transport's operations.
enum class TransportClock {
  Host,    // steady_clock around batches; primitives block until this process's part is done
  Stream,  // CUDA events on the transport's streams; primitives enqueue
};

// One message of a pattern's exchange: `bytes` at `offset` of this rank's send (or receive)
// buffer, to (from) `peer`, matched by `tag`; `remote_offset` is where it lands in the peer's
// receive buffer (transports that write into the peer's memory need it).
struct PeerMessage {
  int peer = 0;
  int tag = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::size_t remote_offset = 0;
};

// What one operation of a protocol is on this transport, in the record's words
// (Accounting::timing and Accounting::latency_includes).
struct ProtocolWords {
  std::string timing;
  std::string latency_includes;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // ---- What it is -------------------------------------------------------------------------------
  virtual TransportClock clock() const { return TransportClock::Host; }
  // Where a pattern's buffers live and how messages move, in words (patterns' latency text).
  virtual std::string describe() const = 0;
  // Whether this transport runs `protocol` (the registration offers only those; a transport
  // without patterns says so in its TransportSpec).
  virtual bool supports(Protocol) const { return true; }
  // The record's words for one operation of `protocol` at `bytes`.
  virtual ProtocolWords words(Protocol protocol) const = 0;
  // Messages in one Bandwidth/Bibw operation (osu_bw's window of 64 for MPI; 1 where one
  // operation is one transfer, back to back on a stream).
  virtual int window_messages() const { return 1; }
  // Per iteration the slowest end's time (Accounting::max_over_ranks) for `protocol`.
  virtual bool max_over_ends(Protocol) const { return false; }
  // Accounting::min_sample_s: the shortest sample this transport's clock times without its own cost
  // showing (kEventClockMinSampleSeconds for CUDA events; 0: the run's).
  virtual double min_sample_s() const { return 0; }
  // Accounting::one_op_per_sample: a clock that times its own fixed loop per sample (a bare
  // nccl-tests loop) is never batched by the harness.
  virtual bool one_op_per_sample(Protocol) const { return false; }
  // Workload::host_enqueue_s, for a clock that enqueues inside its window (the bare loop).
  virtual std::optional<double> host_enqueue_s() const { return std::nullopt; }
  // Accounting::copy_level_witness and Workload::copy_level_us: an MPI transport over device
  // buffers, whose library copies each small message, times its process's small copies.
  virtual bool copy_level_witness() const { return false; }
  virtual std::optional<double> copy_level_us() { return std::nullopt; }

  // ---- The ends this process drives ---------------------------------------------------------------
  // Of kOriginEnd and kPeerEnd, those this process plays: {rank} for one process per end, both for
  // one process driving both GPUs, none for a rank that only takes part in the votes.
  virtual std::vector<int> local_ends() const = 0;
  // Whether `end` runs the timing loop of `protocol` (an end with nothing to do, such as the
  // receiver of a copy into its own memory by the other's engine, may sit it out).
  virtual bool times(Protocol, int /*end*/) const { return true; }

  // ---- Point-to-point buffers (one send and one receive buffer per local end, sized at make) ----
  // Outside the timed loop. The source pattern is core/pattern.h's (a function of the byte's index
  // and the seed), so a smaller size is a prefix of a larger one.
  virtual void fill_send(int end, std::size_t bytes, std::uint64_t seed) = 0;
  // Makes the receive buffer wrong again (and whatever copy of it a transport keeps).
  virtual void poison_recv(int end, std::size_t bytes) = 0;
  // Index of the first byte of `end`'s receive buffer that differs from the pattern of `seed`, or
  // `bytes` when all match.
  virtual std::size_t check_recv(int end, std::size_t bytes, std::uint64_t seed) = 0;
  // Moves the buffers to a smaller size inside what make() allocated (the caller poisons after);
  // false where reused memory is not the same measurement (managed memory whose pages the larger
  // size moved). Must answer alike on every rank.
  virtual bool resize(std::size_t /*bytes*/) { return true; }
  // After the buffers are filled or resized, before they are poisoned: a transport whose first
  // operation sets something up (NCCL connects a peer pair on its first send, and a smaller size
  // may take another protocol) runs `one_op` here, untimed, and waits for it. Done on return.
  virtual void connect(const std::function<void()>& /*one_op*/) {}

  // ---- Protocol primitives (completion follows clock()) ---------------------------------------------
  // One message of `bytes` from end `from`'s send buffer into end `to`'s receive buffer; each
  // local end does its part (sends, receives, or both when one process drives both).
  virtual void transfer(int from, int to, std::size_t bytes) = 0;
  // One Bandwidth operation: window_messages() messages from -> to; on a host clock the sender
  // waits for the receiver's acknowledgement, so the operation ends when the data is there.
  virtual void window(int from, int to, std::size_t bytes) = 0;
  // One Bibw operation: window_messages() messages each way between a and b at once.
  virtual void window_both(int /*a*/, int /*b*/, std::size_t /*bytes*/) {}

  // ---- The clock ----------------------------------------------------------------------------------
  // Times `samples` samples of `ops` calls of op() by this transport's clock and appends per-op
  // seconds per sample (time_host_samples, or time_event_samples on the transport's streams: a
  // stream transport chooses how a batch starts, e.g. enqueued as they come for a round trip whose
  // launches are part of it, behind a start-blocking kernel for back-to-back bandwidth).
  virtual void time(Protocol protocol, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
                    const std::function<void()>& op) = 0;
  // Runs `samples` samples of `ops` operations of `protocol` at `bytes` by itself and appends
  // per-op seconds (ping-pong: a whole round trip; the caller halves it), or returns false to let
  // the generic loop (time() around the primitives) do it. `move` false: the planted no-op
  // (COMMATLAS_TEST_SKIP_MOVE), which must time the loop without moving a byte.
  virtual bool run_native(Protocol, std::size_t /*bytes*/, std::int64_t /*samples*/, std::int64_t /*ops*/,
                          std::vector<double>& /*seconds*/, bool /*move*/) {
    return false;
  }
  // After a timed run: throws MeasurementError when something the clock could not see went wrong
  // (a GPU wait that timed out instead of seeing its flag).
  virtual void check_run() {}

  // ---- Pattern memory (one rank per process; done on return) ----------------------------------
  // Asked only of transports whose TransportSpec has a PatternSide; the defaults throw
  // MeasurementError, so a transport without patterns leaves them out.
  // The exchange buffers of make()'s send/recv sizes (what pack writes and unpack reads).
  virtual void* send_home();
  virtual void* recv_home();
  // More memory of the same kind (the halo grid), owned by the transport.
  virtual void* allocate(std::size_t bytes);
  virtual void upload(void* dst, const void* host, std::size_t bytes);
  virtual void download(void* host, const void* src, std::size_t bytes);
  virtual void fill(void* dst, unsigned char byte, std::size_t bytes);
  // The application's work around the messages: faces gathered into the send buffer, the receive
  // buffer scattered into the ghost cells (GPU kernels where the memory is a GPU's).
  virtual void pack(const HaloGeometry& g, const double* grid, void* send);
  virtual void unpack(const HaloGeometry& g, const void* recv, double* grid);

  // ---- Pattern primitives (done on return) ------------------------------------------------------
  // Every message sent and received, received data in place.
  virtual void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs);
  // One 8-byte count to each send peer and from each receive peer (recv_counts sized by the caller).
  virtual void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                               const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts);
  // Sum over ranks of `count` floats; may stay in flight until finish(). Only transports whose
  // PatternSide says `collectives` are asked.
  virtual void allreduce(const float* send, float* recv, std::size_t count);
  virtual void finish() {}
};

// Makes one transport for one benchmark variant: buffers of `send_bytes` and `recv_bytes` for each
// local end (0 on a rank that drives no end). Collective where the transport maps or registers
// memory (every rank of the job calls it). Throws Skip with the reason when it cannot run here.
using TransportMaker =
    std::function<std::unique_ptr<Transport>(Context&, const Params&, std::size_t send_bytes, std::size_t recv_bytes)>;

// One point-to-point benchmark a transport offers: the protocol and the benchmark's description.
struct ProtocolBenchmark {
  Protocol protocol;
  BenchmarkInfo info;  // key ("mpi.pingpong"), suite, metric, sizes, ... as `list` shows them
};

// What the application patterns need to know of a transport that runs them.
struct PatternSide {
  std::string key;           // "mpi", "staged", "gpu_aware", "ipc", "nccl": pattern.<name>.<key>
  bool on_gpu = false;       // the pattern's buffers live on the rank's GPU (else host malloc)
  bool collectives = true;   // runs the bucketed allreduce
  // The GPU this rank works on (GPU transports), for the movement record.
  std::function<int(const Context&)> gpu;
  // Why the patterns cannot run here, when that differs from TransportSpec::unavailable (which it
  // then replaces for the patterns), or unset.
  std::function<std::optional<std::string>(const Context&)> unavailable = nullptr;
};

struct TransportSpec {
  Mechanism mechanism;  // the movement's mechanism (variants may refine it: movement below)
  std::string suite;  // "mpi", "mpi-gpu", "nccl"
  // Why this transport cannot run in this context (before anything is allocated), or nullopt.
  std::function<std::optional<std::string>(const Context&)> unavailable;
  TransportMaker make;

  // Point-to-point protocols it runs (empty: none).
  std::vector<ProtocolBenchmark> protocols = {};
  // The variants of a protocol's benchmark (each with its "direction": p2p_direction()); empty
  // function: one variant, {"direction"}.
  std::function<std::vector<Params>(const Context&, Protocol)> variants = nullptr;
  // The movement of one protocol variant; empty function: p2p_movement() with `mechanism` between
  // host memory of ranks 0 and 1.
  std::function<Movement(const Context&, const Params&, Protocol)> movement = nullptr;
  // Thrown as Skip before the transport is made for a size it cannot carry ("above the largest MPI
  // message"), or nullopt.
  std::function<std::optional<std::string>(std::uint64_t bytes)> refuse_size = nullptr;

  // The application patterns (unset: none).
  std::optional<PatternSide> patterns = std::nullopt;
};

// Registers a transport's protocol and pattern benchmarks. Call at static initialisation, in the
// transport's own file: `const bool registered = register_transport(TransportSpec{...});`.
bool register_transport(TransportSpec spec);

// A family of benchmarks written once over every transport (the point-to-point protocols, the
// patterns): it is called once for every transport registered, whichever registers first.
using TransportFamily = void (*)(const std::shared_ptr<const TransportSpec>&);
bool register_transport_family(TransportFamily family);

// ---- Shared words and movements of the point-to-point protocols -----------------------------------
inline constexpr Protocol kProtocols[] = {Protocol::PingPong, Protocol::Bandwidth, Protocol::Bibw};
// The last part of a protocol's benchmark key: "pingpong", "bandwidth", "bibw".
const char* protocol_name(Protocol protocol);
// Ping-pong reports a latency, the windows a bandwidth.
Metric protocol_metric(Protocol protocol);
// The `direction` parameter of records ("half_round_trip", "uni", "bi"): a bidirectional figure sums
// both directions, so the report must never rank it against a one-way figure of the same path.
const char* p2p_direction(Protocol protocol);
// The movement of `protocol` from end 0's buffer to end 1's (ping-pong: a half round trip). The
// endpoints get ranks 0 and 1 here; their memory is the caller's.
Movement p2p_movement(Protocol protocol, Mechanism mechanism, Endpoint from, Endpoint to);
// Payload bytes one operation counts for messages of `bytes`: a round trip counts one message (its
// time is halved), a window its messages, bidirectional both directions.
double p2p_bytes_per_op(Protocol protocol, std::uint64_t bytes, int window_messages);

}  // namespace commatlas
