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
#include <vector>

#include "backends/cuda/memory.h"
#include "core/benchmark.h"

namespace commatlas::gi {

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

// The words of a side's control buffer (8 bytes each): the peer raises the chunk flags and the
// acknowledgement; the rest are this GPU's own.
enum Word : int {
  kAck = kMaxChunks,      // bandwidth: the receiver's "ready" and "sample delivered" counts
  kAbort = kMaxChunks + 1,  // set by a block that timed out: every other spin of this GPU stops
  kEpoch = kMaxChunks + 2,  // ping-pong: round trips completed by this GPU's kernels so far
  kDone = kMaxChunks + 3,   // ping-pong: blocks of the current kernel that finished
  kWords = kMaxChunks + 4,
};

enum class LaunchMode { Persistent, BackToBack, Graph, LaunchIncluded };
std::string to_string(LaunchMode m);
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
  GpuBuffer send;
  GpuBuffer inbox;
  GpuBuffer control;  // kWords 8-byte words, zeroed
  GpuBuffer status;   // pinned and mapped: [0] a spin of this GPU timed out
  std::unique_ptr<GpuBuffer> times;  // %globaltimer stamps of persistent kernels (device memory, grown)
  Stream stream;
  unsigned char* peer_inbox = nullptr;
  std::uint64_t* peer_control = nullptr;
  bool initiator = false;  // sends first (ping-pong) or sends (bandwidth); times the sample
  std::uint64_t seed = 0;  // of the pattern in `send`
  std::uint64_t peer_seed = 0;
  int sms = 0;
  std::size_t times_capacity = 0;
  // Graphs of `ops` single-round-trip kernels, by ops (graph launch mode).
  std::map<std::int64_t, cudaGraphExec_t> graphs;
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

  // Ping-pong round trips: appends one per-op figure (half a round trip) per sample when this
  // process holds the initiator.
  void pingpong(LaunchMode mode, std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move,
                std::vector<double>& seconds);
  // One-way messages back to back, a flag per chunk; the receiver acknowledges each sample's last
  // message. Appends per-message seconds per sample on the initiator (the sender).
  void stream(std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move, std::vector<double>& seconds);

  // Poisons every inbox of this process (outside timed loops); returns when done.
  void poison(std::size_t bytes);
  // Byte check of each inbox that receives in `pingpong` (both) or `stream` (the receiver's):
  // empty when every byte is right, else where the first wrong one is.
  std::string check(std::size_t bytes, bool both_ways);

 private:
  void raise_timeouts();
  std::vector<Side*> sides_;
  std::uint64_t stream_seq_ = 0;  // last chunk sequence of the bandwidth protocol
  std::uint64_t ack_seq_ = 0;     // last acknowledgement of the bandwidth protocol
};

// The accounting words of each protocol and mode; `mapping` is "peer access" or "CUDA IPC".
Accounting pingpong_accounting(LaunchMode mode, std::size_t bytes, const std::string& mapping);
Accounting stream_accounting(std::size_t bytes, const std::string& mapping);

}  // namespace commatlas::gi
