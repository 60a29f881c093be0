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
// Every protocol runs natively; the generic primitives and the patterns are refused.
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

}  // namespace commatlas
