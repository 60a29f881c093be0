// GPU-initiated messages: a kernel on one GPU stores the payload straight into the peer GPU's
// memory and raises a flag there (a release store at system scope, since the flag crosses GPUs);
// the peer's kernel acquires the flag (an acquire load at system scope) before it answers or
// counts the message as delivered. The peer's memory is mapped by peer access in one process and
// by CUDA IPC across processes; the kernels are the same.
//
// A message is cut into chunks of at least kMinChunkBytes; block b of a kernel stores chunk b
// (and b + grid, ...) with 16-byte streaming stores, then raises that chunk's flag to the
// message's sequence number. A receiver waits for every chunk's flag, so an answer never leaves
// before the whole message has arrived. Flags only grow, so nothing is reset between messages.
//
// Every spin is guarded: after kSpinTimeoutNs without progress the kernel records the timeout,
// raises its abort word (so its other blocks stop at once too) and returns; the host turns that
// into a MeasurementError. A peer that died can never wedge a GPU.
//
// Launch modes of the ping-pong (the record's `launch_mode`):
//   persistent       one kernel per GPU runs every round trip of a batch; GPU 0's kernel reads
//                    %globaltimer at each sample boundary; nothing is launched inside the timed loop
//   back_to_back     one kernel per GPU per round trip, enqueued behind a start-blocking kernel,
//                    CUDA events around each sample
//   graph            `ops` such kernels captured once per GPU into a CUDA graph and replayed
//                    (nccl-tests -G), CUDA events around each replay
//   launch_included  one round trip per sample: both kernels launched, the host waits for both,
//                    host steady_clock
//
// The application patterns (halo, neighbour exchange) run over it too, with a rank per GPU
// (PatternTransport, below): each message stored straight into the neighbour's receive buffer and
// flagged there, one kernel per exchange launched by the host, which waits for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/memory.h"
#include "core/benchmark.h"
#include "core/launch_mode.h"
#include "core/error.h"
#include "core/pattern.h"  // COMMATLAS_HD
#include "transport/device_arena.h"
#include "transport/transport.h"

namespace commatlas {

// Chunk flags per direction (a message of more chunks than this has larger chunks).
inline constexpr int kMaxChunks = 1024;
// The smallest chunk one block stores before raising its flag.
inline constexpr std::size_t kMinChunkBytes = 16 << 10;
inline constexpr int kThreadsPerBlock = 512;
// How long one spin waits for its flag before the measurement fails.
inline constexpr std::uint64_t kSpinTimeoutNs = 5ull * 1000 * 1000 * 1000;
// Persistent samples are read with %globaltimer, whose update interval is up to 1 us on some
// GPUs: samples of at least 100 us keep that under 1% of each.
inline constexpr double kPersistentMinSampleSeconds = 100e-6;

// The small-message protocol's words per direction (below).
inline constexpr int kLlWords = 1024;

// The words of a side's control buffer (8 bytes each): the peer raises the chunk flags and the
// acknowledgement; the rest are this GPU's own.
enum Word : int {
  kAck = kMaxChunks,      // bandwidth: the receiver's "ready" and "sample delivered" counts
  kAbort = kMaxChunks + 1,  // set by a block that timed out: every other spin of this GPU stops
  kEpoch = kMaxChunks + 2,  // ping-pong: round trips completed by this GPU's kernels so far
  kDone = kMaxChunks + 3,   // ping-pong: blocks of the current kernel that finished
  kLl = kMaxChunks + 4,     // ping-pong, small messages: kLlWords words of 4 payload bytes and a 4-byte flag each
  kWords = kMaxChunks + 4 + kLlWords,
};

// Small messages (the ping-pong up to ll_max_bytes()) go by the flag-in-word protocol that NCCL
// calls LL: each 8-byte store into the peer's kLl words carries 4 payload bytes and the message's
// sequence number, so the receiver polls the words themselves and needs no fence; it copies the
// data out into its inbox. 8-byte aligned stores cross NVLink as single transactions, so a word
// whose flag matches holds its data. Above the threshold the payload is stored, then a flag is
// raised with a release at system scope (which waits for the payload's stores to be acknowledged).
// 4 KiB: one block of kThreadsPerBlock threads carries it in two 8-byte stores per thread; the
// data doubles on the wire, and beyond a few KiB the release's one extra trip is a small share.
inline constexpr std::size_t kLlMaxBytes = 4 * static_cast<std::size_t>(kLlWords);
// The threshold in force: kLlMaxBytes, or COMMATLAS_GI_LL_MAX (bytes, at most kLlMaxBytes; 0 turns
// the protocol off) so one device run can time both protocols at the same size.
std::size_t ll_max_bytes();
// How a spin on a flag reads it: an acquire load at system scope on every poll (default), or
// relaxed (volatile) polls and one acquire fence once the flag is seen (COMMATLAS_GI_POLL=relaxed).
bool relaxed_poll();
// The small-message protocol carries a ping-pong message of `bytes`.
inline bool uses_ll(std::size_t bytes) { return bytes <= ll_max_bytes(); }

using LaunchMode = OpLaunch;
LaunchMode launch_mode_from_string(const std::string& text);  // throws UsageError
inline constexpr LaunchMode kLaunchModes[] = {LaunchMode::Persistent, LaunchMode::BackToBack, LaunchMode::Graph,
                                              LaunchMode::LaunchIncluded};

// How a message of `bytes` is cut: `chunks` chunks of `chunk_bytes` (a multiple of 16, the last
// one shorter), stored by at most `max_blocks` blocks.
struct Chunking {
  int chunks = 1;
  std::size_t chunk_bytes = 0;
  int blocks = 1;
};
Chunking chunking(std::size_t bytes, int max_blocks);

// One GPU's end of the link, in this process: what it sends, the inbox and control words the peer
// writes into, where its kernels report a timeout, and the peer's inbox and control words as this
// GPU addresses them (peer access or an IPC mapping; set by the owner of the link).
struct Side {
  Side(int device, std::size_t bytes);
  int device;
  cuda::GpuBuffer send;
  cuda::GpuBuffer inbox;
  cuda::GpuBuffer control;  // kWords 8-byte words, zeroed
  cuda::GpuBuffer status;   // pinned and mapped: [0] a spin of this GPU timed out
  std::unique_ptr<cuda::GpuBuffer> times;  // %globaltimer stamps of persistent kernels (device memory, grown)
  cuda::Stream stream;
  unsigned char* peer_inbox = nullptr;
  std::uint64_t* peer_control = nullptr;
  bool initiator = false;  // sends first (ping-pong) or sends (bandwidth); times the sample
  std::uint64_t seed = 0;  // of the pattern in `send`
  std::uint64_t peer_seed = 0;
  int sms = 0;
  std::size_t times_capacity = 0;
  // Graphs of `ops` single-round-trip kernels (graph launch mode), by what their kernel nodes
  // baked in: message size, ops, and whether they store the payload (the planted no-op does not).
  std::map<std::tuple<std::size_t, std::int64_t, bool>, cudaGraphExec_t> graphs;
  ~Side();
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
};

// The GPU-initiated protocols over the sides this process holds: both (one process, peer access)
// or one (a rank per GPU, CUDA IPC). Every side enqueues the same protocol; the initiator's times
// are the figure. Callers keep the processes in step (the harness gives every rank the same
// samples and ops).
class Link {
 public:
  explicit Link(std::vector<Side*> sides) : sides_(std::move(sides)) {}

  // Ping-pong round trips: appends one per-op figure per sample when this process holds the
  // initiator, half a round trip (`halve`) or a whole one.
  void pingpong(LaunchMode mode, std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move,
                std::vector<double>& seconds, bool halve = true);
  // One-way messages back to back, a flag per chunk; the receiver acknowledges each sample's last
  // message. Appends per-message seconds per sample on the initiator (the sender).
  void stream(std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move, std::vector<double>& seconds);

  // Poisons every inbox of this process (outside timed loops); returns when done.
  void poison(std::size_t bytes);
  // Byte check of each inbox that receives in `pingpong` (both) or `stream` (the receiver's):
  // empty when every byte is right, else where the first wrong one is.
  std::string check(std::size_t bytes, bool both_ways);
  // Throws MeasurementError when a spin of this process's GPUs timed out.
  void raise_timeouts();

 private:
  std::vector<Side*> sides_;
  std::uint64_t stream_seq_ = 0;  // last chunk sequence of the bandwidth protocol
  std::uint64_t ack_seq_ = 0;     // last acknowledgement of the bandwidth protocol
};

// The accounting words of each protocol and mode; `mapping` is "peer access" or "CUDA IPC".
Accounting pingpong_accounting(LaunchMode mode, std::size_t bytes, const std::string& mapping);
Accounting stream_accounting(std::size_t bytes, const std::string& mapping);

// The variants of the ping-pong (every launch mode) or the one-way bandwidth (persistent), between
// GPUs 0 and 1; `mapping` is the record's "peer_access" or "cuda_ipc".
std::vector<Params> link_variants(bool pingpong, const std::string& mapping);
// Device buffers of GPUs 0 and 1 (of ranks 0 and 1 where `ranks`): a half round trip or a send.
Movement link_movement(bool pingpong, const Params& variant, bool ranks);

// The mechanism as a transport (transport.h): the sides this process holds and the link over them.
// Every protocol runs natively; the generic primitives are refused, and so are the patterns (theirs
// is PatternTransport, below: every rank's buffers, not two ends').
class GpuInitiatedTransport : public Transport {
 public:
  GpuInitiatedTransport(LaunchMode mode, std::string mapping) : mode_(mode), mapping_(std::move(mapping)) {}

  TransportClock clock() const override { return TransportClock::Stream; }
  std::string describe() const override { return "GPU-initiated stores and flags (" + mapping_ + ")"; }
  bool supports(Protocol p) const override { return p != Protocol::Bibw; }
  // The ping-pong's protocol depends on the size: the accounting follows the size in force.
  bool resize(std::size_t bytes) override {
    bytes_ = bytes;
    return true;
  }
  ProtocolWords words(Protocol p) const override {
    const Accounting a =
        p == Protocol::PingPong ? pingpong_accounting(mode_, bytes_, mapping_) : stream_accounting(bytes_, mapping_);
    return {a.timing, a.latency_includes};
  }
  double min_sample_s() const override { return pingpong_accounting(mode_, 0, mapping_).min_sample_s; }
  bool one_op_per_sample(Protocol p) const override { return p == Protocol::PingPong && mode_ == LaunchMode::LaunchIncluded; }

  std::vector<int> local_ends() const override { return ends_; }

  void fill_send(int end, std::size_t bytes, std::uint64_t seed) override {
    Side& s = side(end);
    cuda::DeviceScope scope(s.device);
    cuda::fill_pattern_on_device(s.send.data(), bytes, seed, s.stream.get());
    s.stream.synchronize();
  }
  void poison_recv(int end, std::size_t bytes) override {
    Side& s = side(end);
    cuda::DeviceScope scope(s.device);
    cuda::poison_on_device(s.inbox.data(), bytes, s.stream.get());
    s.stream.synchronize();
  }
  std::size_t check_recv(int end, std::size_t bytes, std::uint64_t seed) override {
    Side& s = side(end);
    cuda::DeviceScope scope(s.device);
    return cuda::find_mismatch_on_device(s.inbox.data(), bytes, seed, s.stream.get());
  }

  // Every operation runs natively: the generic loop never calls these.
  void transfer(int, int, std::size_t) override { refuse("a generic transfer"); }
  void window(int, int, std::size_t) override { refuse("a generic window"); }
  void time(Protocol, std::int64_t, std::int64_t, std::vector<double>&, const std::function<void()>&) override {
    refuse("the generic loop");
  }
  bool run_native(Protocol p, std::size_t bytes, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
                  bool move) override {
    if (p == Protocol::PingPong)
      link_->pingpong(mode_, bytes, samples, ops, move, seconds, /*halve=*/false);  // the protocol halves
    else
      link_->stream(bytes, samples, ops, move, seconds);
    return true;
  }
  void check_run() override { link_->raise_timeouts(); }

  void* send_home() override { refuse("patterns"); }
  void* recv_home() override { refuse("patterns"); }
  void* allocate(std::size_t) override { refuse("patterns"); }
  void upload(void*, const void*, std::size_t) override { refuse("patterns"); }
  void download(void*, const void*, std::size_t) override { refuse("patterns"); }
  void fill(void*, unsigned char, std::size_t) override { refuse("patterns"); }
  void pack(const HaloGeometry&, const double*, void*) override { refuse("patterns"); }
  void unpack(const HaloGeometry&, const void*, double*) override { refuse("patterns"); }
  void exchange(const std::vector<PeerMessage>&, const std::vector<PeerMessage>&) override { refuse("patterns"); }
  void exchange_counts(const std::vector<PeerMessage>&, const std::vector<std::uint64_t>&, const std::vector<PeerMessage>&,
                       std::vector<std::uint64_t>&) override {
    refuse("patterns");
  }

 protected:
  [[noreturn]] static void refuse(const std::string& what) {
    throw MeasurementError("the GPU-initiated transport runs no " + what + ": its protocols run natively");
  }
  Side& side(int end) {
    for (std::size_t i = 0; i < ends_.size(); ++i)
      if (ends_[i] == end) return *sides_[i];
    throw MeasurementError("end " + std::to_string(end) + " is not driven by this process");
  }
  void start_link() {
    std::vector<Side*> raw;
    for (auto& s : sides_) raw.push_back(s.get());
    link_ = std::make_unique<Link>(raw);
  }

  LaunchMode mode_;
  std::string mapping_;
  std::size_t bytes_ = 0;  // the message size in force (set by the owner, then by resize)
  std::vector<int> ends_;
  std::vector<std::unique_ptr<Side>> sides_;
  std::unique_ptr<Link> link_;
};

// ---- The application patterns: halo and neighbour exchange, a rank per GPU ----------------------
//
// One exchange (or exchange of counts) is one call of the pattern: the host launches one kernel on
// its rank's GPU and waits for it (the patterns' primitives are done on return, and the pattern
// times whole steps on the host). The kernel
//   1. raises, for every message this rank receives, the sender's go-ahead word of the message's
//      slot to the call's sequence number (release, system scope): the host launched it after every
//      earlier primitive of this rank returned, so nothing still reads what that slot received last;
//   2. stores every message it sends, chunk by chunk (a block per chunk: at least kMinChunkBytes, at
//      most kPatternChunks per message), straight into the receiver's buffer at the message's place,
//      each chunk after the receiver's go-ahead, then raises the chunk's flag in the receiver's
//      memory (release, system scope) to chunk_flag(seq, chunks);
//   3. waits (block 0, acquire loads at system scope) for every chunk flag of every message it
//      receives: the first flag says how many chunks the message has, so a receiver needs no size
//      (the irregular exchange's receivers learn theirs only from the counts).
// A count of the irregular exchange is a message of its own slot: its value stored into the
// receiver's count word, then its flag raised; the receiver copies it to host memory.
// A slot is a message's tag (data) or kPatternTags + tag (counts): in one call a rank sends at most
// one message per tag and receives at most one per tag (the patterns tag by direction). Sequence
// numbers, flags and go-aheads only grow: every rank makes the same calls in the same order.
// Every wait gives up after kSpinTimeoutNs, raises this GPU's abort word and those of the ranks
// it exchanges with (so theirs stop at once too) and records why; check_run() reports it and the
// pattern's data check, which every rank takes part in, fails the point.

inline constexpr int kPatternTags = 16;                   // tags 0 .. 15; also the most messages a call sends
inline constexpr int kPatternSlots = 2 * kPatternTags;    // data slots, then count slots
inline constexpr int kPatternChunks = 64;                 // chunk flags per slot: the most chunks of a message
inline constexpr std::uint64_t kFlagStride = 128;         // chunk_flag's sequence step (> kPatternChunks)
static_assert(kPatternChunks < static_cast<int>(kFlagStride), "a flag holds its message's chunk count");

// The words of a rank's pattern control buffer (8 bytes each).
enum PatternWord : int {
  kPatternFlags = 0,                                   // slot s, chunk c: s * kPatternChunks + c
  kPatternReady = kPatternSlots * kPatternChunks,      // slot s: the go-ahead its receiver raised
  kPatternCounts = kPatternReady + kPatternSlots,      // count slot t: the count received
  kPatternAbort = kPatternCounts + kPatternTags,       // raised by this GPU or one it exchanges with
  kPatternWords,
};

// What a chunk's flag holds: the call's sequence number and the message's chunk count.
COMMATLAS_HD constexpr std::uint64_t chunk_flag(std::uint64_t seq, int chunks) {
  return seq * kFlagStride + static_cast<std::uint64_t>(chunks);
}
// Whether a flag has reached call `seq` (it never runs ahead: the sender waits for the go-ahead).
COMMATLAS_HD constexpr bool flag_reached(std::uint64_t flag, std::uint64_t seq) { return flag >= seq * kFlagStride; }
// The chunk count a reached flag carries; outside [1, kPatternChunks] it is malformed.
COMMATLAS_HD constexpr int flag_chunks(std::uint64_t flag, std::uint64_t seq) {
  return static_cast<int>(flag - seq * kFlagStride);
}

// How a pattern message of `bytes` is cut (chunk_bytes a multiple of 16; a message of 0 bytes is
// one empty chunk, still flagged: the receiver waits for every message it expects).
struct PatternChunking {
  int chunks = 1;
  std::size_t chunk_bytes = kMinChunkBytes;
};
PatternChunking pattern_chunking(std::size_t bytes);

// Rank r's receive buffer and pattern control words as this rank addresses them (its own, or
// mapped: CUDA IPC across processes).
struct RankMemory {
  unsigned char* inbox = nullptr;
  std::size_t inbox_bytes = 0;
  std::uint64_t* control = nullptr;
};

// One message of a call, as the kernel sees it.
struct WireMessage {
  const unsigned char* src = nullptr;  // sends: this rank's bytes (null: a count, `value`)
  unsigned char* dst = nullptr;        // sends: where they land in the receiver's buffer
  std::uint64_t* flags = nullptr;      // the slot's chunk flags, in the receiver's memory
  std::uint64_t* ready = nullptr;      // the slot's go-ahead word, in the sender's memory
  std::uint64_t* count = nullptr;      // counts: the slot's count word, in the receiver's memory
  std::uint64_t* peer_abort = nullptr;  // the other rank's abort word
  std::uint64_t value = 0;             // a count's value (sends)
  std::size_t bytes = 0;
  std::size_t chunk_bytes = 0;
  int chunks = 1;
};

// One call's plan: passed to the kernel by value (kernel parameters hold 4 KiB).
struct StepPlan {
  int sends = 0, recvs = 0;
  int items = 0;                       // send chunks in all
  bool counts = false;                 // an exchange of counts
  std::uint64_t seq = 0;               // set when the call runs
  std::uint64_t flag_lag = 0;          // test-only: flags raised this many calls short
  std::uint64_t* own_abort = nullptr;
  int* status = nullptr;               // host-mapped: why this GPU's waits gave up (PatternStatus)
  std::uint64_t* counts_out = nullptr;  // host-mapped: the counts received, in recv order
  WireMessage send[kPatternTags];
  WireMessage recv[kPatternTags];
};
static_assert(sizeof(StepPlan) <= 4000, "a plan travels as kernel parameters");

// What a pattern kernel recorded in its status word.
enum PatternStatus : int { kPatternOk = 0, kPatternTimedOut = 1, kPatternBadFlag = 2 };

// The plan of one call of rank `rank` over `ranks` (indexed by rank): `counts` null for a data
// exchange (messages from `send` at their offsets into the receivers' buffers at their
// remote_offsets), or the counts to send (one per message of `sends`; offsets unused). Throws
// MeasurementError for a call the kernel cannot carry: more than kPatternTags messages a way, a
// tag out of range or used twice in a way, a rank not mapped, a message outside its buffers.
StepPlan plan_step(int rank, const std::vector<RankMemory>& ranks, const unsigned char* send, std::size_t send_bytes,
                   const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs,
                   const std::vector<std::uint64_t>* counts);

// The words of the patterns' latency_includes for this mechanism (`mapping`: "CUDA IPC mapping").
std::string pattern_words(int device, const std::string& mapping);

// The patterns' transport over GPU-initiated stores: this rank's buffers on its GPU (the receive
// buffer is where its neighbours store), its control words, and every rank's receive buffer and
// control words as this rank addresses them (set by the subclass that maps them: start_ranks()).
// The protocols' primitives are not its: the patterns ask only for memory and exchanges.
class PatternTransport : public OnDeviceArena<Transport> {
 public:
  PatternTransport(int rank, int device, std::size_t send_bytes, std::size_t recv_bytes, std::string mapping);

  std::string describe() const override { return pattern_words(arena_.device(), mapping_); }
  ProtocolWords words(Protocol) const override { refuse("protocol"); }
  std::vector<int> local_ends() const override { return {}; }
  void fill_send(int, std::size_t, std::uint64_t) override { refuse("protocol buffer"); }
  void poison_recv(int, std::size_t) override { refuse("protocol buffer"); }
  std::size_t check_recv(int, std::size_t, std::uint64_t) override { refuse("protocol buffer"); }
  void transfer(int, int, std::size_t) override { refuse("protocol"); }
  void window(int, int, std::size_t) override { refuse("protocol"); }
  void time(Protocol, std::int64_t, std::int64_t, std::vector<double>&, const std::function<void()>&) override {
    refuse("protocol");
  }

  void* send_home() override { return arena_.send(); }
  void* recv_home() override { return arena_.recv(); }
  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override;
  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override;
  // Throws MeasurementError when a wait of this GPU gave up, or one of a rank it exchanges with.
  void check_run() override;

 protected:
  [[noreturn]] static void refuse(const std::string& what) {
    throw MeasurementError("the GPU-initiated patterns' transport runs no " + what + " primitive");
  }
  // This rank's receive buffer and control words, to export to the others.
  void* inbox() const { return arena_.recv(); }
  void* control() const { return control_.data(); }
  std::size_t inbox_bytes() const { return recv_bytes_; }
  // Every rank's memory as this rank addresses it (its own entry included), once mapped.
  void start_ranks(std::vector<RankMemory> ranks) { ranks_ = std::move(ranks); }

 private:
  void run(StepPlan& plan);

  int rank_;
  std::string mapping_;
  std::size_t send_bytes_, recv_bytes_;
  cuda::GpuBuffer control_;     // kPatternWords words, zeroed
  cuda::GpuBuffer status_;      // pinned and mapped: a PatternStatus
  cuda::GpuBuffer counts_out_;  // pinned and mapped: kPatternTags counts received
  std::vector<RankMemory> ranks_;
  std::uint64_t seq_ = 0;
  int sms_ = 1;
};

}  // namespace commatlas
