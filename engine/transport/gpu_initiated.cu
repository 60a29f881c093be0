// The GPU-initiated link's kernels and protocols (gpu_initiated.h), the patterns' exchange kernel
// and transport (mapped by gpu_initiated_mpi.cu), and the transport over peer access, one process
// driving GPUs 0 and 1 (gpu_initiated.pingpong, gpu_initiated.bandwidth; suite gpu). NVIDIA only: the flags are PTX acquire loads and release stores at system scope; a HIP
// build leaves the mechanism out.
#ifndef COMMATLAS_HIP

#include "transport/gpu_initiated.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch_timing.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

using u64 = unsigned long long;

__device__ inline u64 load_acquire_sys(const std::uint64_t* p) {
  u64 v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ inline void store_release_sys(std::uint64_t* p, u64 v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ inline u64 load_relaxed_sys(const std::uint64_t* p) {
  u64 v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ inline void fence_acquire_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

// One 8-byte word of the small-message protocol: a single store, seen whole by the peer.
__device__ inline void store_word_relaxed_sys(std::uint64_t* p, u64 v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// What every kernel of one side needs.
struct Args {
  const unsigned char* src;
  unsigned char* peer_inbox;
  std::uint64_t* peer_control;
  std::uint64_t* own_control;
  int* timed_out;          // host-mapped
  unsigned long long* times;  // persistent ping-pong on the initiator; null otherwise
  std::size_t bytes;
  std::size_t chunk_bytes;
  int chunks;
  bool initiator;
  bool move;  // false: the planted no-op (flags only, no payload)
  bool ll;    // the small-message protocol: flag and data in one word (ping-pong, one block)
  bool relaxed_poll;  // spins poll relaxed and acquire once (COMMATLAS_GI_POLL=relaxed)
  unsigned char* own_inbox;  // where the small-message protocol copies a received message
  u64 flag_lag;  // test-only: flags raised this much too low (COMMATLAS_TEST_GI_WRONG_FLAG), never answered
};

// Spins until *flag >= target. False when this GPU gave up (timeout here or elsewhere).
__device__ bool wait_at_least(const Args& a, const std::uint64_t* flag, u64 target) {
  if (a.relaxed_poll) {
    // Relaxed polls, then one fence: the fence after the load that saw the flag orders the
    // payload's reads after it, as the acquire load would on every poll.
    if (load_relaxed_sys(flag) < target) {
      const u64 start = cuda::device_time_ns();
      auto* abort = reinterpret_cast<volatile std::uint64_t*>(a.own_control + kAbort);
      while (load_relaxed_sys(flag) < target) {
        if (*abort != 0) return false;
        if (cuda::device_time_ns() - start > kSpinTimeoutNs) {
          *abort = 1;
          *reinterpret_cast<volatile int*>(a.timed_out) = 1;
          __threadfence_system();
          return false;
        }
      }
    }
    fence_acquire_sys();
    return true;
  }
  if (load_acquire_sys(flag) >= target) return true;
  const u64 start = cuda::device_time_ns();
  auto* abort = reinterpret_cast<volatile std::uint64_t*>(a.own_control + kAbort);
  while (load_acquire_sys(flag) < target) {
    if (*abort != 0) return false;
    if (cuda::device_time_ns() - start > kSpinTimeoutNs) {
      *abort = 1;
      *reinterpret_cast<volatile int*>(a.timed_out) = 1;
      __threadfence_system();
      return false;
    }
  }
  return true;
}

// Every thread of the block takes part; true when flags [0, n) of this side all reached target.
__device__ bool block_wait_all(const Args& a, const std::uint64_t* flags, int n, u64 target) {
  bool ok = true;
  for (int c = static_cast<int>(threadIdx.x); c < n && ok; c += static_cast<int>(blockDim.x))
    ok = wait_at_least(a, flags + c, target);
  return __syncthreads_or(!ok) == 0;
}

// Stores chunk c of the message into the peer's inbox, then raises its flag to `seq`. The barrier
// orders every thread's stores before thread 0's release (release is cumulative), so the peer's
// acquire of the flag sees the whole chunk.
__device__ void send_chunk(const Args& a, int c, u64 seq) {
  const std::size_t begin = static_cast<std::size_t>(c) * a.chunk_bytes;
  const std::size_t end = min(a.bytes, begin + a.chunk_bytes);
  if (a.move && begin < end) {
    const std::size_t vectors = (end - begin) / 16;
    const auto* s = reinterpret_cast<const int4*>(a.src + begin);
    auto* d = reinterpret_cast<int4*>(a.peer_inbox + begin);
    for (std::size_t i = threadIdx.x; i < vectors; i += blockDim.x) __stcs(d + i, __ldg(s + i));
    // The tail (a whole message of 8 bytes or less): 8-byte words, then bytes.
    const std::size_t tail = begin + vectors * 16, words = (end - tail) / 8;
    if (threadIdx.x < words)
      *reinterpret_cast<unsigned long long*>(a.peer_inbox + tail + 8 * threadIdx.x) =
          *reinterpret_cast<const unsigned long long*>(a.src + tail + 8 * threadIdx.x);
    for (std::size_t i = tail + words * 8 + threadIdx.x; i < end; i += blockDim.x) a.peer_inbox[i] = a.src[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) store_release_sys(a.peer_control + c, seq - a.flag_lag);
}

// The small-message protocol, sender: word i of the peer's kLl words gets payload bytes
// [4i, 4i + 4) (zero-padded past the end) and the message's sequence number in its high half, in
// one 8-byte store. No barrier and no fence: each word is its own flag. The planted no-op sends
// the flags with zero data, and its receiver copies nothing out.
__device__ void ll_send(const Args& a, u64 seq) {
  const u64 flag = static_cast<std::uint32_t>(seq - a.flag_lag);
  const std::size_t words = (a.bytes + 3) / 4;
  for (std::size_t i = threadIdx.x; i < words; i += blockDim.x) {
    std::uint32_t data = 0;
    if (a.move) {
      if (4 * i + 4 <= a.bytes) {
        data = reinterpret_cast<const std::uint32_t*>(a.src)[i];
      } else {
        for (std::size_t b = 4 * i; b < a.bytes; ++b) data |= static_cast<std::uint32_t>(a.src[b]) << (8 * (b - 4 * i));
      }
    }
    store_word_relaxed_sys(a.peer_control + kLl + i, (flag << 32) | data);
  }
}

// The small-message protocol, receiver: every thread polls its words until their flag is the
// message's sequence number (relaxed loads: the data is in the word that carries the flag), then
// copies the data into the inbox. Every thread of the block takes part; false when this GPU gave up.
__device__ bool ll_recv(const Args& a, u64 seq) {
  const std::uint32_t flag = static_cast<std::uint32_t>(seq);
  const std::size_t words = (a.bytes + 3) / 4;
  auto* abort = reinterpret_cast<volatile std::uint64_t*>(a.own_control + kAbort);
  bool ok = true;
  for (std::size_t i = threadIdx.x; i < words && ok; i += blockDim.x) {
    const std::uint64_t* w = a.own_control + kLl + i;
    u64 v = load_relaxed_sys(w);
    if (static_cast<std::uint32_t>(v >> 32) != flag) {
      const u64 start = cuda::device_time_ns();
      while (static_cast<std::uint32_t>((v = load_relaxed_sys(w)) >> 32) != flag) {
        if (*abort != 0) {
          ok = false;
          break;
        }
        if (cuda::device_time_ns() - start > kSpinTimeoutNs) {
          *abort = 1;
          *reinterpret_cast<volatile int*>(a.timed_out) = 1;
          __threadfence_system();
          ok = false;
          break;
        }
      }
    }
    if (!ok || !a.move) continue;
    const auto data = static_cast<std::uint32_t>(v);
    if (4 * i + 4 <= a.bytes) {
      reinterpret_cast<std::uint32_t*>(a.own_inbox)[i] = data;
    } else {
      for (std::size_t b = 4 * i; b < a.bytes; ++b) a.own_inbox[b] = static_cast<unsigned char>(data >> (8 * (b - 4 * i)));
    }
  }
  return __syncthreads_or(!ok) == 0;
}

// `round_trips` ping-pongs (plus one untimed handshake when `handshake`); block b stores chunks b,
// b + grid, ... and every block waits for all of the peer's chunk flags before it goes on.
// The sequence numbers continue from this side's epoch word, so a kernel captured once in a graph
// is right on every replay; the last block to finish moves the epoch on (every block has read it
// by then, and the next kernel of the stream starts after this one ends).
__global__ void pingpong_kernel(Args a, std::int64_t round_trips, std::int64_t stamp_every, bool handshake) {
  const u64 base = *reinterpret_cast<volatile std::uint64_t*>(a.own_control + kEpoch);
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  auto send_all = [&](u64 seq) {
    for (int c = static_cast<int>(blockIdx.x); c < a.chunks; c += static_cast<int>(gridDim.x)) send_chunk(a, c, seq);
  };
  const std::int64_t total = round_trips + (handshake ? 1 : 0);
  if (stamps && !handshake) a.times[0] = cuda::device_time_ns();
  for (std::int64_t r = 0; r < total; ++r) {
    const u64 seq = base + static_cast<u64>(r) + 1;
    if (a.ll) {
      // One block. The answer leaves after the barrier of ll_recv, so the peer's next message
      // (which follows the answer) never overwrites a word still being read.
      if (a.initiator) {
        ll_send(a, seq);
        if (!ll_recv(a, seq)) return;
      } else {
        if (!ll_recv(a, seq)) return;
        ll_send(a, seq);
      }
    } else if (a.initiator) {
      send_all(seq);
      if (!block_wait_all(a, a.own_control, a.chunks, seq)) return;
    } else {
      if (!block_wait_all(a, a.own_control, a.chunks, seq)) return;
      send_all(seq);
    }
    const std::int64_t counted = r + 1 - (handshake ? 1 : 0);
    if (stamps && counted >= 0 && counted % stamp_every == 0) a.times[counted / stamp_every] = cuda::device_time_ns();
  }
  if (threadIdx.x == 0) {
    __threadfence();
    const u64 finished = atomicAdd(reinterpret_cast<u64*>(a.own_control + kDone), 1ull) + 1;
    if (finished == gridDim.x) {
      a.own_control[kDone] = 0;
      a.own_control[kEpoch] = base + static_cast<u64>(total);
    }
  }
}

// Bandwidth, sender: waits for the receiver's "ready", then `samples` x `ops` messages back to
// back (a flag per chunk), waiting after each sample for the receiver's acknowledgement.
__global__ void stream_send_kernel(Args a, std::int64_t samples, std::int64_t ops, u64 first_seq, u64 first_ack) {
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  if (!block_wait_all(a, a.own_control + kAck, 1, first_ack)) return;
  if (stamps) a.times[0] = cuda::device_time_ns();
  for (std::int64_t s = 0; s < samples; ++s) {
    for (std::int64_t k = 0; k < ops; ++k) {
      const u64 seq = first_seq + static_cast<u64>(s * ops + k);
      for (int c = static_cast<int>(blockIdx.x); c < a.chunks; c += static_cast<int>(gridDim.x)) send_chunk(a, c, seq);
    }
    if (!block_wait_all(a, a.own_control + kAck, 1, first_ack + static_cast<u64>(s) + 1)) return;
    if (stamps) a.times[s + 1] = cuda::device_time_ns();
  }
}

// Bandwidth, receiver (one block): "ready", then per sample every chunk flag at the sample's last
// message, then the acknowledgement into the sender's memory.
__global__ void stream_recv_kernel(Args a, std::int64_t samples, std::int64_t ops, u64 first_seq, u64 first_ack) {
  if (threadIdx.x == 0) store_release_sys(a.peer_control + kAck, first_ack - a.flag_lag);
  for (std::int64_t s = 0; s < samples; ++s) {
    const u64 last = first_seq + static_cast<u64>((s + 1) * ops) - 1;
    if (!block_wait_all(a, a.own_control, a.chunks, last)) return;
    if (threadIdx.x == 0) store_release_sys(a.peer_control + kAck, first_ack + static_cast<u64>(s) + 1 - a.flag_lag);
  }
}

// ---- the patterns' exchange (gpu_initiated.h: PatternTransport) ----------------------------------

// This GPU gives up: its status says why (the first reason stays), and the abort words of this GPU
// and of every rank this call exchanges with stop their waits too.
__device__ void pattern_give_up(const StepPlan& p, int why) {
  *reinterpret_cast<volatile std::uint64_t*>(p.own_abort) = 1;
  for (int i = 0; i < p.sends; ++i) *reinterpret_cast<volatile std::uint64_t*>(p.send[i].peer_abort) = 1;
  for (int i = 0; i < p.recvs; ++i) *reinterpret_cast<volatile std::uint64_t*>(p.recv[i].peer_abort) = 1;
  auto* status = reinterpret_cast<volatile int*>(p.status);
  if (*status == kPatternOk) *status = why;  // host memory: plain stores, no atomics across PCIe
  __threadfence_system();
}

// Spins until *word >= target (acquire loads, system scope); `seen` gets the value that passed.
// False when this GPU gave up (its own timeout, or an abort raised here by another).
__device__ bool pattern_wait(const StepPlan& p, const std::uint64_t* word, u64 target, u64* seen) {
  u64 v = load_acquire_sys(word);
  if (v < target) {
    const u64 start = cuda::device_time_ns();
    const auto* abort = reinterpret_cast<const volatile std::uint64_t*>(p.own_abort);
    while ((v = load_acquire_sys(word)) < target) {
      if (*abort != 0) return false;
      if (cuda::device_time_ns() - start > kSpinTimeoutNs) {
        pattern_give_up(p, kPatternTimedOut);
        return false;
      }
    }
  }
  if (seen) *seen = v;
  return true;
}

// Chunk c of a message into the receiver's buffer, by the whole block: 16-byte streaming stores
// where source and destination are both 16-byte aligned (chunks are multiples of 16 bytes, so every
// chunk of a message is aligned alike), else 8-byte words, then bytes.
__device__ void pattern_store_chunk(const WireMessage& w, int c) {
  const std::size_t begin = static_cast<std::size_t>(c) * w.chunk_bytes;
  if (begin >= w.bytes) return;
  const std::size_t n = min(w.bytes, begin + w.chunk_bytes) - begin;
  const unsigned char* s = w.src + begin;
  unsigned char* d = w.dst + begin;
  const auto align = reinterpret_cast<std::uintptr_t>(s) | reinterpret_cast<std::uintptr_t>(d);
  std::size_t done = 0;
  if ((align & 15) == 0) {
    const std::size_t vectors = n / 16;
    for (std::size_t i = threadIdx.x; i < vectors; i += blockDim.x)
      __stcs(reinterpret_cast<int4*>(d) + i, __ldg(reinterpret_cast<const int4*>(s) + i));
    done = vectors * 16;
  }
  if ((align & 7) == 0) {
    const std::size_t words = (n - done) / 8;
    for (std::size_t i = threadIdx.x; i < words; i += blockDim.x)
      reinterpret_cast<unsigned long long*>(d + done)[i] = reinterpret_cast<const unsigned long long*>(s + done)[i];
    done += words * 8;
  }
  for (std::size_t i = done + threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
}

// The plan is read in place from the kernel's parameters, its messages by index: without
// __grid_constant__ every thread would first copy it into its local memory.
#if __CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7)
#define COMMATLAS_GRID_CONSTANT __grid_constant__
#else
#define COMMATLAS_GRID_CONSTANT
#endif

// One call of a pattern (gpu_initiated.h): go-aheads, then every chunk sent (block b takes items
// b, b + grid, ...), then block 0 waits for every message received.
__global__ void pattern_exchange_kernel(const COMMATLAS_GRID_CONSTANT StepPlan p) {
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < p.recvs) store_release_sys(p.recv[threadIdx.x].ready, p.seq);
  for (int item = static_cast<int>(blockIdx.x); item < p.items; item += static_cast<int>(gridDim.x)) {
    int m = 0, c = item;
    while (c >= p.send[m].chunks) c -= p.send[m++].chunks;
    const WireMessage& w = p.send[m];
    bool ok = true;
    if (threadIdx.x == 0) ok = pattern_wait(p, w.ready, p.seq, nullptr);
    if (__syncthreads_or(!ok)) return;
    if (w.count) {
      if (threadIdx.x == 0) store_word_relaxed_sys(w.count, w.value);
    } else {
      pattern_store_chunk(w, c);
    }
    // Every thread's stores of the chunk before thread 0's release (release is cumulative).
    __syncthreads();
    if (threadIdx.x == 0) store_release_sys(w.flags + c, chunk_flag(p.seq - p.flag_lag, w.chunks));
  }
  if (blockIdx.x != 0) return;
  for (int r = static_cast<int>(threadIdx.x); r < p.recvs; r += static_cast<int>(blockDim.x)) {
    const WireMessage& w = p.recv[r];
    u64 first = 0;
    if (!pattern_wait(p, w.flags, chunk_flag(p.seq, 0), &first)) return;
    const int chunks = flag_chunks(first, p.seq);
    if (chunks < 1 || chunks > kPatternChunks) {
      pattern_give_up(p, kPatternBadFlag);
      return;
    }
    for (int c = 1; c < chunks; ++c)
      if (!pattern_wait(p, w.flags + c, chunk_flag(p.seq, 0), nullptr)) return;
    // After the acquire of its flag: the count the sender stored before raising it.
    if (w.count) p.counts_out[r] = *reinterpret_cast<const volatile std::uint64_t*>(w.count);
  }
}

// The self-check's planted fault: the answering side raises every flag one short, so the side
// that waits for it must fail with a timeout, never hang and never report a figure.
bool test_wrong_flag() {
  const char* v = std::getenv("COMMATLAS_TEST_GI_WRONG_FLAG");
  return v && *v && std::strcmp(v, "0") != 0;
}

Args args_of(Side& s, const Chunking& ch, std::size_t bytes, bool move, bool with_times) {
  Args a{};
  a.src = s.send.as<unsigned char>();
  a.peer_inbox = s.peer_inbox;
  a.peer_control = s.peer_control;
  a.own_control = s.control.as<std::uint64_t>();
  a.timed_out = static_cast<int*>(s.status.device_view());
  a.times = with_times ? s.times->as<unsigned long long>() : nullptr;
  a.bytes = bytes;
  a.chunk_bytes = ch.chunk_bytes;
  a.chunks = ch.chunks;
  a.initiator = s.initiator;
  a.move = move;
  a.flag_lag = !s.initiator && test_wrong_flag() ? 1 : 0;
  a.own_inbox = s.inbox.as<unsigned char>();
  a.relaxed_poll = relaxed_poll();
  return a;
}

// The ping-pong's arguments: the small-message protocol where the size allows (one block).
Args pingpong_args(Side& s, const Chunking& ch, std::size_t bytes, bool move, bool with_times) {
  Args a = args_of(s, ch, bytes, move, with_times);
  a.ll = uses_ll(bytes) && ch.blocks == 1 && ch.chunks == 1;
  return a;
}

// The persistent kernels' stamps: `count` of them, into seconds per op.
std::vector<unsigned long long> read_stamps(Side& s, std::int64_t count) {
  std::vector<unsigned long long> t(static_cast<std::size_t>(count));
  cuda::DeviceScope scope(s.device);
  COMMATLAS_GPU_CHECK(cudaMemcpy(t.data(), s.times->data(), t.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  return t;
}

void ensure_times(Side& s, std::int64_t count) {
  if (static_cast<std::size_t>(count) <= s.times_capacity) return;
  const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(count), 2 * s.times_capacity);
  s.times = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, n * sizeof(unsigned long long), s.device);
  s.times_capacity = n;
}

}  // namespace

std::size_t ll_max_bytes() {
  static const std::size_t v = [] {
    const char* e = std::getenv("COMMATLAS_GI_LL_MAX");
    if (!e || !*e) return kLlMaxBytes;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(e, &end, 10);
    if (end == e || *end != '\0') throw UsageError(std::string("COMMATLAS_GI_LL_MAX='") + e + "' is not a byte count");
    return std::min<std::size_t>(static_cast<std::size_t>(n), kLlMaxBytes);
  }();
  return v;
}

bool relaxed_poll() {
  static const bool v = [] {
    const char* e = std::getenv("COMMATLAS_GI_POLL");
    if (!e || !*e || std::strcmp(e, "acquire") == 0) return false;
    if (std::strcmp(e, "relaxed") == 0) return true;
    throw UsageError(std::string("COMMATLAS_GI_POLL='") + e + "' is neither acquire nor relaxed");
  }();
  return v;
}

LaunchMode launch_mode_from_string(const std::string& text) {
  return op_launch_from(text, {LaunchMode::Persistent, LaunchMode::BackToBack, LaunchMode::Graph,
                               LaunchMode::LaunchIncluded});
}

Chunking chunking(std::size_t bytes, int max_blocks) {
  Chunking ch;
  const std::size_t by_count = (bytes + kMaxChunks - 1) / kMaxChunks;
  ch.chunk_bytes = (std::max(kMinChunkBytes, by_count) + 15) / 16 * 16;
  ch.chunks = static_cast<int>(std::max<std::size_t>(1, (bytes + ch.chunk_bytes - 1) / ch.chunk_bytes));
  ch.blocks = std::max(1, std::min(ch.chunks, max_blocks));
  return ch;
}

Side::Side(int device_, std::size_t bytes)
    // The inbox and control words are what a peer process maps (CUDA IPC): whole IPC blocks.
    : device(device_), send(cuda::MemoryKind::Device, bytes, device_),
      inbox(cuda::MemoryKind::Device, cuda::ipc_block_bytes(bytes), device_),
      control(cuda::MemoryKind::Device, cuda::ipc_block_bytes(kWords * sizeof(std::uint64_t)), device_),
      status(cuda::MemoryKind::Pinned, sizeof(int), device_),
      times(std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, 1024 * sizeof(unsigned long long), device_)),
      stream(device_) {
  times_capacity = 1024;
  cuda::DeviceScope scope(device);
  COMMATLAS_GPU_CHECK(cudaMemset(control.data(), 0, control.bytes()));
  *status.as<int>() = 0;
  sms = cuda::sm_count(device);
  // With lazy module loading a kernel's first launch loads its module and waits for the device: a
  // first launch queued behind a start-blocking kernel would deadlock. Load them all now.
  cudaFuncAttributes attributes;
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, pingpong_kernel));
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, stream_send_kernel));
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, stream_recv_kernel));
}

Side::~Side() {
  cuda::DeviceScope scope(device, cuda::DeviceScope::NoThrow{});
  for (auto& [key, exec] : graphs) cudaGraphExecDestroy(exec);
}

void Link::raise_timeouts() {
  for (Side* s : sides_)
    if (*s->status.as<volatile int>() != 0)
      throw MeasurementError("GPU " + std::to_string(s->device) + " waited more than " +
                             std::to_string(kSpinTimeoutNs / 1000000000ull) + " s for its peer's flag");
}

void Link::pingpong(LaunchMode mode, std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move,
                    std::vector<double>& seconds, bool halve) {
  Side* timer = nullptr;
  for (Side* s : sides_)
    if (s->initiator) timer = s;
  std::vector<double> discarded;
  std::vector<double>& out = timer ? seconds : discarded;
  const std::size_t first = out.size();
  // One round trip per kernel, in every mode but the persistent one.
  auto launch_one = [&](Side& s) {
    const Chunking ch = chunking(bytes, s.sms);
    cuda::DeviceScope scope(s.device);
    pingpong_kernel<<<ch.blocks, kThreadsPerBlock, 0, s.stream.get()>>>(pingpong_args(s, ch, bytes, move, false), 1, 1, false);
    COMMATLAS_GPU_CHECK_LAUNCH();
  };
  std::vector<const cuda::Stream*> streams;
  for (Side* s : sides_) streams.push_back(&s->stream);
  if (timer) std::stable_partition(streams.begin(), streams.end(), [&](const cuda::Stream* st) { return st == &timer->stream; });

  switch (mode) {
    case LaunchMode::Persistent: {
      for (Side* s : sides_) {
        const Chunking ch = chunking(bytes, s->sms);
        const bool stamps = s == timer;
        if (stamps) ensure_times(*s, samples + 1);
        cuda::DeviceScope scope(s->device);
        pingpong_kernel<<<ch.blocks, kThreadsPerBlock, 0, s->stream.get()>>>(pingpong_args(*s, ch, bytes, move, stamps),
                                                                              samples * ops, ops, true);
        COMMATLAS_GPU_CHECK_LAUNCH();
      }
      for (Side* s : sides_) s->stream.synchronize();
      raise_timeouts();
      if (timer) {
        const auto t = read_stamps(*timer, samples + 1);
        for (std::int64_t i = 0; i < samples; ++i)
          out.push_back(static_cast<double>(t[i + 1] - t[i]) * 1e-9 / static_cast<double>(ops));
      }
      break;
    }
    case LaunchMode::BackToBack:
    case LaunchMode::Graph:
    case LaunchMode::LaunchIncluded: {
      // The launched modes, one round trip per kernel: timed as every launched operation is.
      // A graph per GPU of `ops` kernels, captured once (first use per size, count and fault).
      auto side_of = [&](std::size_t i) -> Side& {
        for (Side* s : sides_)
          if (&s->stream == streams[i]) return *s;
        throw MeasurementError("a stream of no side of this link");
      };
      auto graph_of = [&](std::size_t i) {
        Side& s = side_of(i);
        const auto key = std::make_tuple(bytes, ops, move);
        if (auto found = s.graphs.find(key); found != s.graphs.end()) return found->second;
        cuda::DeviceScope scope(s.device);
        cudaGraph_t graph = nullptr;
        COMMATLAS_GPU_CHECK(cudaStreamBeginCapture(s.stream.get(), cudaStreamCaptureModeThreadLocal));
        try {
          for (std::int64_t k = 0; k < ops; ++k) launch_one(s);
        } catch (...) {  // a capture left open would refuse this thread's later allocations
          if (cudaStreamEndCapture(s.stream.get(), &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
          throw;
        }
        COMMATLAS_GPU_CHECK(cudaStreamEndCapture(s.stream.get(), &graph));
        cudaGraphExec_t exec = nullptr;
        const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        COMMATLAS_GPU_CHECK(rc);
        // Uploaded now, untimed: a first launch that uploads would do it inside the timed batch.
        const cudaError_t up = cudaGraphUpload(exec, s.stream.get());
        if (up != cudaSuccess) cudaGraphExecDestroy(exec);
        COMMATLAS_GPU_CHECK(up);
        s.stream.synchronize();
        s.graphs[key] = exec;
        return exec;
      };
      cuda::time_launched(mode, streams, samples, ops, out, [&](std::size_t i) { launch_one(side_of(i)); }, graph_of);
      break;
    }
  }
  raise_timeouts();
  if (halve)
    for (std::size_t i = first; i < out.size(); ++i) out[i] /= 2;
}

void Link::stream(std::size_t bytes, std::int64_t samples, std::int64_t ops, bool move, std::vector<double>& seconds) {
  const std::uint64_t first_seq = stream_seq_ + 1, first_ack = ack_seq_ + 1;
  stream_seq_ += static_cast<std::uint64_t>(samples * ops);
  ack_seq_ += static_cast<std::uint64_t>(samples) + 1;
  Side* timer = nullptr;
  for (Side* s : sides_) {
    const Chunking ch = chunking(bytes, s->sms);
    cuda::DeviceScope scope(s->device);
    if (s->initiator) {
      timer = s;
      ensure_times(*s, samples + 1);
      stream_send_kernel<<<ch.blocks, kThreadsPerBlock, 0, s->stream.get()>>>(args_of(*s, ch, bytes, move, true), samples,
                                                                               ops, first_seq, first_ack);
    } else {
      stream_recv_kernel<<<1, 1024, 0, s->stream.get()>>>(args_of(*s, ch, bytes, move, false), samples, ops, first_seq,
                                                         first_ack);
    }
    COMMATLAS_GPU_CHECK_LAUNCH();
  }
  for (Side* s : sides_) s->stream.synchronize();
  raise_timeouts();
  if (!timer) return;
  const auto t = read_stamps(*timer, samples + 1);
  for (std::int64_t i = 0; i < samples; ++i)
    seconds.push_back(static_cast<double>(t[i + 1] - t[i]) * 1e-9 / static_cast<double>(ops));
}

void Link::poison(std::size_t bytes) {
  for (Side* s : sides_) {
    cuda::DeviceScope scope(s->device);
    cuda::poison_on_device(s->inbox.data(), bytes, s->stream.get());
  }
  for (Side* s : sides_) s->stream.synchronize();
}

std::string Link::check(std::size_t bytes, bool both_ways) {
  for (Side* s : sides_) {
    if (!both_ways && s->initiator) continue;  // the sender's inbox receives nothing one way
    cuda::DeviceScope scope(s->device);
    const std::size_t bad = cuda::find_mismatch_on_device(s->inbox.data(), bytes, s->peer_seed, s->stream.get());
    if (bad != bytes)
      return "byte " + std::to_string(bad) + " of the " + format_size(bytes) + " GPU-initiated message stored into GPU " +
             std::to_string(s->device) + "'s memory differs";
  }
  return "";
}

Accounting pingpong_accounting(LaunchMode mode, std::size_t bytes, const std::string& mapping) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  const std::string poll = relaxed_poll() ? "relaxed polls, then one acquire fence (system scope)"
                                           : "acquire loads (system scope) on every poll";
  const std::string trip =
      uses_ll(bytes)
          ? "half a round trip, GPU to GPU, protocol LL (flag in every word, up to " + format_size(ll_max_bytes()) +
                "): a kernel stores the message into the peer's memory (" + mapping +
                ") as 8-byte words of 4 payload bytes and the message's sequence number, no fence; the peer's kernel "
                "polls the words (relaxed loads) until each carries the sequence, copies the payload into its inbox "
                "and answers the same way"
          : "half a round trip, GPU to GPU, protocol payload-then-flag: a kernel stores the payload into the peer's "
                "memory (" + mapping + ") and raises a flag there (release, system scope); the peer's kernel waits "
                "for it (" + poll + ") and answers the same way";
  cuda::set_launch_sampling(a, mode);
  switch (mode) {
    case LaunchMode::Persistent:
      a.min_sample_s = kPersistentMinSampleSeconds;
      a.timing = "%globaltimer of the initiating GPU, read by its persistent kernel at each sample boundary: one kernel "
                 "per GPU runs every round trip of a batch after an untimed handshake, nothing launched inside the "
                 "timed loop; per-op time halved";
      a.latency_includes = trip + "; no kernel launch, no host";
      break;
    case LaunchMode::BackToBack:
      a.timing = "CUDA events on the initiating GPU's stream around back-to-back kernel pairs (one per GPU per round "
                 "trip) queued behind a start-blocking kernel (BlockedStart); per-op time halved";
      a.latency_includes = trip + "; one kernel per GPU per round trip, launched back to back (launch overlapped)";
      break;
    case LaunchMode::Graph:
      a.timing = "CUDA events on the initiating GPU's stream around one replay of a CUDA graph per GPU holding `ops` "
                 "single-round-trip kernels, captured once (as nccl-tests -G); per-op time halved";
      a.latency_includes = trip + "; one graph kernel node per GPU per round trip";
      break;
    case LaunchMode::LaunchIncluded:
      a.timing = "host steady_clock around one round trip: a kernel launched on each GPU, then both streams "
                 "synchronized; halved";
      a.latency_includes = trip + "; both kernel launches and the host's wait included";
      break;
  }
  return a;
}

Accounting stream_accounting(std::size_t bytes, const std::string& mapping) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  a.min_sample_s = kPersistentMinSampleSeconds;
  a.timing = "%globaltimer of the sending GPU, read by its persistent kernel at each sample boundary: back-to-back "
             "messages, each chunk stored by one block (16-byte streaming stores into the peer's memory, " + mapping +
             ") and flagged (release, system scope), the receiver waiting with " +
             std::string(relaxed_poll() ? "relaxed polls and one acquire fence" : "acquire loads") +
             " (system scope); a sample ends when the receiver's acknowledgement of its last "
             "message (every chunk flag acquired) reaches the sender, one flag's one-way latency per sample";
  a.latency_includes = "one message stored and flagged chunk by chunk, no launch";
  return a;
}

std::vector<Params> link_variants(bool pingpong, const std::string& mapping) {
  std::vector<Params> out;
  for (LaunchMode m : kLaunchModes) {
    if (!pingpong && m != LaunchMode::Persistent) continue;  // a stream of messages runs in one kernel
    out.push_back(Params{{"gpus", std::string("0,1")}, {"direction", std::string(pingpong ? "half_round_trip" : "uni")},
                         {"launch_mode", std::string(to_string(m))}, {"mapping", mapping}});
  }
  return out;
}

Movement link_movement(bool pingpong, const Params& p, bool ranks) {
  Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device), to = gpu_memory(gpu_of_rank(p, 1), Allocator::Device);
  if (ranks) {
    from.rank = 0;
    to.rank = 1;
  }
  return movement_between(pingpong ? Operation::PingPong : Operation::SendRecv,
                          pingpong ? MoveDirection::HalfRoundTrip : MoveDirection::Uni, Mechanism::GpuInitiated, from, to,
                          p, {"launch_mode", "mapping"});
}

// ---- the patterns' transport -------------------------------------------------------------------

PatternChunking pattern_chunking(std::size_t bytes) {
  PatternChunking ch;
  const std::size_t by_count = (bytes + kPatternChunks - 1) / kPatternChunks;
  ch.chunk_bytes = (std::max(kMinChunkBytes, by_count) + 15) / 16 * 16;
  ch.chunks = static_cast<int>(std::max<std::size_t>(1, (bytes + ch.chunk_bytes - 1) / ch.chunk_bytes));
  return ch;
}

StepPlan plan_step(int rank, const std::vector<RankMemory>& ranks, const unsigned char* send, std::size_t send_bytes,
                   const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs,
                   const std::vector<std::uint64_t>* counts) {
  const auto fail = [rank](const std::string& why) {
    return MeasurementError("the GPU-initiated exchange of rank " + std::to_string(rank) + " cannot carry this call: " + why);
  };
  const auto memory_of = [&](int r) -> const RankMemory& {
    if (r < 0 || r >= static_cast<int>(ranks.size()) || !ranks[r].control || !ranks[r].inbox)
      throw fail("rank " + std::to_string(r) + "'s memory is not mapped here (CUDA IPC reaches the ranks of one node)");
    return ranks[r];
  };
  const RankMemory& own = memory_of(rank);
  if (sends.size() > static_cast<std::size_t>(kPatternTags) || recvs.size() > static_cast<std::size_t>(kPatternTags))
    throw fail(std::to_string(sends.size()) + " sends and " + std::to_string(recvs.size()) + " receives, at most " +
               std::to_string(kPatternTags) + " each");
  if (counts && counts->size() != sends.size())
    throw fail(std::to_string(counts->size()) + " counts for " + std::to_string(sends.size()) + " messages");
  // A slot per tag and kind: one message a tag each way, or two would share flags.
  const auto slot_of = [&](const PeerMessage& m, std::uint32_t& used, const char* way) {
    if (m.tag < 0 || m.tag >= kPatternTags)
      throw fail("tag " + std::to_string(m.tag) + " is outside 0.." + std::to_string(kPatternTags - 1));
    if (used & (1u << m.tag)) throw fail(std::string("two messages ") + way + " with tag " + std::to_string(m.tag));
    used |= 1u << m.tag;
    return counts ? kPatternTags + m.tag : m.tag;
  };

  StepPlan p;
  p.counts = counts != nullptr;
  p.own_abort = own.control + kPatternAbort;
  std::uint32_t used = 0;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const PeerMessage& m = sends[i];
    const int slot = slot_of(m, used, "sent");
    const RankMemory& to = memory_of(m.peer);
    WireMessage& w = p.send[p.sends++];
    w.flags = to.control + kPatternFlags + slot * kPatternChunks;
    w.ready = own.control + kPatternReady + slot;
    w.peer_abort = to.control + kPatternAbort;
    if (counts) {
      w.count = to.control + kPatternCounts + m.tag;
      w.value = (*counts)[i];
    } else {
      if (m.offset + m.bytes > send_bytes)
        throw fail("a message of " + std::to_string(m.bytes) + " bytes at " + std::to_string(m.offset) +
                   " runs past the send buffer of " + std::to_string(send_bytes));
      if (m.remote_offset + m.bytes > to.inbox_bytes)
        throw fail("a message of " + std::to_string(m.bytes) + " bytes at " + std::to_string(m.remote_offset) +
                   " runs past rank " + std::to_string(m.peer) + "'s receive buffer of " + std::to_string(to.inbox_bytes));
      const PatternChunking ch = pattern_chunking(m.bytes);
      w.src = send + m.offset;
      w.dst = to.inbox + m.remote_offset;
      w.bytes = m.bytes;
      w.chunk_bytes = ch.chunk_bytes;
      w.chunks = ch.chunks;
    }
    p.items += w.chunks;
  }
  used = 0;
  for (const PeerMessage& m : recvs) {
    const int slot = slot_of(m, used, "received");
    const RankMemory& from = memory_of(m.peer);
    WireMessage& w = p.recv[p.recvs++];
    w.flags = own.control + kPatternFlags + slot * kPatternChunks;
    w.ready = from.control + kPatternReady + slot;
    w.peer_abort = from.control + kPatternAbort;
    if (counts) w.count = own.control + kPatternCounts + m.tag;
  }
  return p;
}

std::string pattern_words(int device, const std::string& mapping) {
  return "device buffers of GPU " + std::to_string(device) +
         ", GPU-initiated: a kernel stores each message straight into the neighbour's receive buffer (" + mapping +
         "; a block per chunk of at least " + format_size(kMinChunkBytes) +
         ", 16-byte stores where both ends are aligned) once the neighbour's go-ahead flag says the buffer is "
         "free, and raises a flag per "
         "chunk there (release, system scope), the neighbour's kernel waiting with acquire loads (system scope); "
         "the irregular exchange's counts the same way; one kernel per exchange, launched by the host, which waits "
         "for it (launch and wait included; no persistent kernel: the pack and unpack kernels and the host's step "
         "lie between exchanges)";
}

PatternTransport::PatternTransport(int rank, int device, std::size_t send_bytes, std::size_t recv_bytes, std::string mapping)
    : OnDeviceArena(device, send_bytes, recv_bytes), rank_(rank), mapping_(std::move(mapping)), send_bytes_(send_bytes),
      recv_bytes_(recv_bytes),
      control_(cuda::MemoryKind::Device, cuda::ipc_block_bytes(kPatternWords * sizeof(std::uint64_t)), device),  // exported
      status_(cuda::MemoryKind::Pinned, sizeof(int), device),
      counts_out_(cuda::MemoryKind::Pinned, kPatternTags * sizeof(std::uint64_t), device) {
  cuda::DeviceScope scope(device);
  // Zeroed before the handles are traded: a neighbour may raise a flag here as soon as it maps it.
  COMMATLAS_GPU_CHECK(cudaMemsetAsync(control_.data(), 0, control_.bytes(), arena_.stream().get()));
  arena_.stream().synchronize();
  *status_.as<int>() = kPatternOk;
  sms_ = std::max(1, cuda::sm_count(device));
  cudaFuncAttributes attributes;  // loaded now, not at the first (timed) launch (lazy module loading)
  COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, pattern_exchange_kernel));
}

void PatternTransport::run(StepPlan& plan) {
  plan.seq = ++seq_;
  plan.flag_lag = rank_ != 0 && test_wrong_flag() ? 1 : 0;  // the planted fault: every other rank one short
  plan.status = static_cast<int*>(status_.device_view());
  plan.counts_out = static_cast<std::uint64_t*>(counts_out_.device_view());
  // Every block resident at once (one per SM at most): spinning blocks never wait for a slot.
  const int grid = std::max(1, std::min(plan.items, sms_));
  cuda::DeviceScope scope(arena_.device());
  pattern_exchange_kernel<<<grid, kThreadsPerBlock, 0, arena_.stream().get()>>>(plan);
  COMMATLAS_GPU_CHECK_LAUNCH();
  arena_.stream().synchronize();
}

void PatternTransport::exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) {
  StepPlan plan = plan_step(rank_, ranks_, static_cast<const unsigned char*>(arena_.send()), send_bytes_, sends, recvs, nullptr);
  run(plan);
}

void PatternTransport::exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) {
  StepPlan plan = plan_step(rank_, ranks_, nullptr, 0, sends, recvs, &send_counts);
  run(plan);
  recv_counts.resize(recvs.size());
  const auto* got = counts_out_.as<volatile std::uint64_t>();
  for (std::size_t i = 0; i < recvs.size(); ++i) recv_counts[i] = got[i];
}

void PatternTransport::check_run() {
  const std::string who = "GPU " + std::to_string(arena_.device()) + " (rank " + std::to_string(rank_) + ")";
  switch (*status_.as<volatile int>()) {
    case kPatternTimedOut:
      throw MeasurementError(who + " waited more than " + std::to_string(kSpinTimeoutNs / 1000000000ull) +
                             " s for a neighbour's flag in a GPU-initiated exchange");
    case kPatternBadFlag:
      throw MeasurementError(who + " read a chunk flag that counts no valid number of chunks in a GPU-initiated exchange");
    default: break;
  }
  std::uint64_t abort = 0;
  cuda::DeviceScope scope(arena_.device());
  COMMATLAS_GPU_CHECK(cudaMemcpy(&abort, control_.as<std::uint64_t>() + kPatternAbort, sizeof(abort), cudaMemcpyDeviceToHost));
  if (abort != 0)
    throw MeasurementError(who + " stopped its GPU-initiated exchanges: a rank it exchanges with gave up waiting for a flag");
}

// ---- the transport over peer access: one process, GPUs 0 and 1 ---------------------------------
namespace {

class PeerTransport final : public GpuInitiatedTransport {
 public:
  PeerTransport(LaunchMode mode, int gpu_a, int gpu_b, std::size_t bytes) : GpuInitiatedTransport(mode, "peer access") {
    bytes_ = bytes;
    cuda::enable_peer_access(gpu_a, gpu_b);
    cuda::enable_peer_access(gpu_b, gpu_a);
    sides_.push_back(std::make_unique<Side>(gpu_a, bytes));
    sides_.push_back(std::make_unique<Side>(gpu_b, bytes));
    ends_ = {kOriginEnd, kPeerEnd};
    Side& a = *sides_[0];
    Side& b = *sides_[1];
    a.initiator = true;
    a.peer_inbox = b.inbox.as<unsigned char>();
    a.peer_control = b.control.as<std::uint64_t>();
    b.peer_inbox = a.inbox.as<unsigned char>();
    b.peer_control = a.control.as<std::uint64_t>();
    start_link();
  }
};

BenchmarkInfo peer_info(Protocol p) {
  const bool latency = p == Protocol::PingPong;
  return BenchmarkInfo{latency ? "gpu_initiated.pingpong" : "gpu_initiated.bandwidth",
                       Category::PointToPoint,
                       "gpu",
                       latency ? "GPU-initiated ping-pong between GPUs 0 and 1 (kernel stores + flag in peer memory, "
                                 "peer access), half round trip, per launch mode"
                               : "GPU-initiated one-way messages GPU 0 -> GPU 1 (streaming stores, a flag per chunk, "
                                 "peer access), back to back in a persistent kernel",
                       latency ? Metric::Latency : Metric::Bandwidth,
                       RankRange{1, 1},
                       latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30),
                       latency ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                               : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20}};
}

TransportSpec peer_spec() {
  TransportSpec spec{
      Mechanism::GpuInitiated, "gpu",
      [](const Context&) -> std::optional<std::string> {
        if (auto why = cuda::no_gpu_reason()) return why;
        return cuda::fewer_than_two_gpus();
      },
      [](Context&, const Params& params, std::size_t bytes, std::size_t) -> std::unique_ptr<Transport> {
        return std::make_unique<PeerTransport>(launch_mode_from_string(params.text("launch_mode")),
                                               gpu_of_rank(params, 0).value_or(0), gpu_of_rank(params, 1).value_or(1),
                                               bytes);
      },
      {{Protocol::PingPong, peer_info(Protocol::PingPong)}, {Protocol::Bandwidth, peer_info(Protocol::Bandwidth)}}};
  spec.variants = [](const Context&, Protocol p) { return link_variants(p == Protocol::PingPong, "peer_access"); };
  spec.movement = [](const Context&, const Params& p, Protocol protocol) {
    return link_movement(protocol == Protocol::PingPong, p, /*ranks=*/false);
  };
  return spec;
}

const bool registered = register_transport(peer_spec());

}  // namespace

}  // namespace commatlas

#endif  // COMMATLAS_HIP
