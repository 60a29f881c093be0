// NVSHMEM as a transport (nvshmem.h says what it measures and how): the job's initialisation (once,
// on first use, from a unique ID broadcast over the engine's MPI group), the kernels, and the hook
// that hands the registration in nvshmem.cpp its maker. Built only where CMake found NVSHMEM, as
// relocatable device code device-linked against libnvshmem_device.a in a library of its own.
//
// Every refusal becomes a skip with NVSHMEM's own words (what it printed while it failed), and
// every step that is collective over the job (initialisation, nvshmem_malloc) is agreed between
// ranks before the next one, so a rank that cannot go on never leaves the others waiting inside
// NVSHMEM. The job is finalized once at its end (Group::at_end), where every rank is present, and
// only where every rank initialised.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/memory.h"
#include "core/affinity.h"
#include "core/all_ranks.h"
#include "core/error.h"
#include "core/sizes.h"
#include "transport/nccl_device.h"  // cta_slicing: a message cut into 16-byte-aligned CTA slices
#include "transport/nvshmem.h"
#include "transport/transport.h"

namespace commatlas {
namespace {

using u64 = unsigned long long;

// The symmetric signal words of one transport (8 bytes each, zeroed before first use).
enum NvshmemSignalWord : int {
  kArrived = 0,  // slices delivered into this PE's inbox (each put adds 1)
  kAnswered = 1,  // bandwidth, on the sender: the last message the receiver has seen whole
  kReady = 2,     // bandwidth, on the sender: receiver kernels started (each adds 1)
  kSignalWords = 3,
};

// ---- kernels ----------------------------------------------------------------------------------

struct Args {
  unsigned char* inbox;     // symmetric: this PE's inbox; the same address names the peer's
  const unsigned char* src;  // this rank's message (device memory)
  std::uint64_t* signals;   // symmetric: kSignalWords words
  std::size_t bytes;
  std::size_t slice_bytes;  // per CTA (put=block)
  int peer;                 // the peer's PE
  bool initiator;           // rank 0: sends first, stamps the samples
  bool thread_put;          // put=thread: one thread puts the whole message
  bool move;                // false: the planted no-op (signals without the payload)
  u64* times;               // %globaltimer stamps (rank 0), else null
};

// This CTA's slice of the message into the peer's inbox, adding 1 to the peer's kArrived once
// delivered (the planted no-op adds the 1 without a byte).
__device__ void put_slice(const Args& a) {
  std::uint64_t* arrived = a.signals + kArrived;
  if (a.thread_put) {
    if (threadIdx.x != 0) return;
    if (a.move)
      nvshmem_putmem_signal_nbi(a.inbox, a.src, a.bytes, arrived, 1, NVSHMEM_SIGNAL_ADD, a.peer);
    else
      nvshmemx_signal_op(arrived, 1, NVSHMEM_SIGNAL_ADD, a.peer);
    return;
  }
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * a.slice_bytes;
  const std::size_t end = begin + a.slice_bytes < a.bytes ? begin + a.slice_bytes : a.bytes;
  if (a.move && end > begin) {
    nvshmemx_putmem_signal_nbi_block(a.inbox + begin, a.src + begin, end - begin, arrived, 1, NVSHMEM_SIGNAL_ADD,
                                     a.peer);
  } else if (threadIdx.x == 0) {
    nvshmemx_signal_op(arrived, 1, NVSHMEM_SIGNAL_ADD, a.peer);
  }
}

// Thread 0 waits until this PE's signal `word` reaches `target`; the CTA goes on together.
__device__ void wait_signal(const Args& a, int word, u64 target) {
  if (threadIdx.x == 0) nvshmem_signal_wait_until(a.signals + word, NVSHMEM_CMP_GE, target);
  __syncthreads();
}

// Ping-pong: one untimed handshake round trip, then `round_trips`, rank 0's CTA 0 stamping every
// `stamp_every`. Each message is `slices` puts (one per CTA), so after round trip r this PE has
// received `arrived_before + (r + 1) * slices` of them, counting the handshake as r = 0.
__global__ void __launch_bounds__(kNvshmemThreads, 1)
    pingpong_kernel(Args a, std::int64_t round_trips, std::int64_t stamp_every, u64 arrived_before, int slices) {
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  for (std::int64_t r = 0; r <= round_trips; ++r) {
    const u64 target = arrived_before + static_cast<u64>(r + 1) * static_cast<u64>(slices);
    if (a.initiator) {
      put_slice(a);
      wait_signal(a, kArrived, target);
    } else {
      wait_signal(a, kArrived, target);  // the whole message is in before any of the answer leaves
      put_slice(a);
    }
    if (stamps && r % stamp_every == 0) a.times[r / stamp_every] = cuda::device_time_ns();
  }
  nvshmem_quiet();
}

// Bandwidth, sender: waits for the receiver's kernel, then `samples` x `ops` messages; a CTA puts
// its slice of message `seq` only once the receiver has answered `seq - 1`. After each sample CTA 0
// waits for the answer to its last message and stamps.
__global__ void __launch_bounds__(kNvshmemThreads, 1)
    stream_send_kernel(Args a, std::int64_t samples, std::int64_t ops, u64 first_seq, u64 launch) {
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  wait_signal(a, kReady, launch);
  wait_signal(a, kAnswered, first_seq - 1);
  if (stamps) a.times[0] = cuda::device_time_ns();
  for (std::int64_t s = 0; s < samples; ++s) {
    for (std::int64_t k = 0; k < ops; ++k) {
      const u64 seq = first_seq + static_cast<u64>(s * ops + k);
      wait_signal(a, kAnswered, seq - 1);
      put_slice(a);
    }
    if (blockIdx.x == 0) {
      wait_signal(a, kAnswered, first_seq + static_cast<u64>((s + 1) * ops) - 1);
      if (stamps) a.times[s + 1] = cuda::device_time_ns();
    }
  }
  nvshmem_quiet();
}

// Bandwidth, receiver (one thread): says it runs, then waits for every slice of each message and
// answers it with the message's number.
__global__ void stream_recv_kernel(Args a, std::int64_t messages, u64 first_seq, u64 arrived_before, int slices) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  nvshmemx_signal_op(a.signals + kReady, 1, NVSHMEM_SIGNAL_ADD, a.peer);
  for (std::int64_t m = 0; m < messages; ++m) {
    nvshmem_signal_wait_until(a.signals + kArrived, NVSHMEM_CMP_GE,
                              arrived_before + static_cast<u64>(m + 1) * static_cast<u64>(slices));
    nvshmemx_signal_op(a.signals + kAnswered, first_seq + static_cast<u64>(m), NVSHMEM_SIGNAL_SET, a.peer);
  }
  nvshmem_quiet();
}

// ---- the NVSHMEM job --------------------------------------------------------------------------

bool test_no_peer() {
  const char* v = std::getenv("COMMATLAS_TEST_NVSHMEM_NO_PEER");
  return v && *v && std::strcmp(v, "0") != 0;
}

// What NVSHMEM prints on stderr during `call` (its errors say more than its status codes), also
// passed on to stderr; the last lines, at most ~600 characters, without the trailing newline.
// With NVSHMEM_DEBUG set nothing is captured: its messages go out as they come, so a call that
// never returns (a bootstrap that cannot connect, ended by the watchdog) still shows them.
template <typename Call>
std::string capture_stderr(Call call) {
  if (const char* debug = std::getenv("NVSHMEM_DEBUG"); debug && *debug) {
    call();
    return "";
  }
  std::fflush(stderr);
  FILE* sink = std::tmpfile();
  const int saved = sink ? dup(2) : -1;
  if (saved >= 0) dup2(fileno(sink), 2);
  call();
  std::string text;
  if (saved >= 0) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::rewind(sink);
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, sink)) > 0) text.append(buffer, n);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (sink) std::fclose(sink);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

std::string said(const std::string& text) { return text.empty() ? "" : ": NVSHMEM said: " + text; }

struct NvshmemJob {
  int pe = 0;
  int pes = 0;
  int device = 0;
};

// The job's NVSHMEM, initialised on first use with every rank of the engine's group a PE (the
// unique ID bootstrap: rank 0's ID broadcast over MPI, so NVSHMEM's MPI plugin need not match this
// MPI). Kept for the process's life and finalized at the job's end, where every rank is.
const NvshmemJob& nvshmem_job(Context& ctx) {
  static std::optional<NvshmemJob> made;
  static std::string failed;
  if (made) return *made;
  if (!failed.empty()) throw Skip(failed);
  Group& group = ctx.group;
  for (const auto& [name, value] : nvshmem_environment_defaults()) setenv(name.c_str(), value.c_str(), /*overwrite=*/0);
  const int gpus = cuda::gpu_count();
  NvshmemJob job{0, 0, gpus > 0 ? group.local_rank() % gpus : 0};
  cuda::DeviceScope scope(job.device);  // NVSHMEM takes the current device as the PE's GPU

  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  int rc = 0;
  std::string words;
  if (group.rank() == 0) words = capture_stderr([&] { rc = nvshmemx_get_uniqueid(&id); });
  if (const std::int64_t status = group.broadcast(rc); status != 0) {
    failed = "NVSHMEM made no unique ID on rank 0 (nvshmemx_get_uniqueid: status " + std::to_string(status) + ")" +
             said(words);
    throw Skip(failed);
  }
  // The 128-byte ID, 8 bytes at a time.
  static_assert(sizeof(id) % sizeof(std::int64_t) == 0, "the unique ID is whole 8-byte words");
  std::int64_t word[sizeof(id) / sizeof(std::int64_t)];
  std::memcpy(word, &id, sizeof id);
  for (std::int64_t& w : word) w = group.broadcast(w);
  std::memcpy(&id, word, sizeof id);

  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  rc = nvshmemx_set_attr_uniqueid_args(group.rank(), group.size(), &id, &attr);
  if (rc == 0) {
    // nvshmemx_init_attr's own body without its exit(-1) on failure: a failure is a skip here.
    nvshmemx_init_init_attr_ver_only(attr);
    const nvshmemi_version_t version = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
                                        NVSHMEM_VENDOR_PATCH_VERSION};
    int provided = 0;
    HelperThreadScope helpers;  // NVSHMEM's proxy thread gets the rank's cores (core/affinity.h)
    words = capture_stderr([&] {
      rc = nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, NVSHMEMX_INIT_WITH_UNIQUEID, &attr, version);
    });
  }
  const bool ok = rc == 0;
  if (!group.all(ok)) {
    // A rank that did initialise stays so (finalizing alone would wait for the others forever).
    failed = ok ? "NVSHMEM did not initialise on another rank"
                : "NVSHMEM did not initialise (nvshmemx_init_attr with a unique ID: status " + std::to_string(rc) + ")" +
                      said(words);
    throw Skip(failed);
  }
  job.pe = nvshmem_my_pe();
  job.pes = nvshmem_n_pes();
  const int device = job.device;
  group.at_end([device] {
    cuda::DeviceScope at(device, cuda::DeviceScope::NoThrow{});
    nvshmem_finalize();
  });
  made = job;
  return *made;
}

// ---- the transport ----------------------------------------------------------------------------

// Memory of the symmetric heap. nvshmem_malloc and nvshmem_free are collective: every PE makes and
// frees the same blocks in the same order (a transport whose constructor throws after allocating
// does so on every rank, agreed, so every rank frees here alike).
class SymmetricMemory {
 public:
  SymmetricMemory() = default;
  SymmetricMemory(const SymmetricMemory&) = delete;
  SymmetricMemory& operator=(const SymmetricMemory&) = delete;
  ~SymmetricMemory() {
    if (!ptr_) return;
    cuda::DeviceScope scope(device_, cuda::DeviceScope::NoThrow{});
    nvshmem_free(ptr_);
  }
  void allocate(int device, std::size_t bytes) {
    device_ = device;
    ptr_ = nvshmem_malloc(bytes);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  int device_ = 0;
  void* ptr_ = nullptr;
};

class NvshmemTransport final : public Transport {
 public:
  // Collective: every rank of the job is a PE and takes part in the symmetric allocations; ranks 0
  // and 1 drive the two ends.
  NvshmemTransport(Context& ctx, NvshmemPut put, std::size_t bytes) : group_(ctx.group), put_(put) {
    job_ = nvshmem_job(ctx);
    bytes_ = static_cast<std::size_t>(group_.broadcast(static_cast<std::int64_t>(bytes)));
    if (auto why = nvshmem_refuse_size(put_, bytes_)) throw Skip(*why);
    window_bytes_ = std::max<std::size_t>((bytes_ + 4095) / 4096 * 4096, 4096);
    max_ctas_ = static_cast<int>(group_.broadcast(cuda::sm_count(job_.device)));
    cuda::DeviceScope scope(job_.device);
    // nvshmem_malloc is collective (every PE, the same size) and ends in a barrier of all PEs.
    const std::string printed = capture_stderr([&] {
      inbox_memory_.allocate(job_.device, window_bytes_);
      signal_memory_.allocate(job_.device, kSignalWords * sizeof(std::uint64_t));
    });
    inbox_ = inbox_memory_.as<unsigned char>();
    signals_ = signal_memory_.as<std::uint64_t>();
    agree(inbox_ != nullptr && signals_ != nullptr, "allocate its symmetric memory",
          "nvshmem_malloc of " + format_size(window_bytes_) + " returned nothing (NVSHMEM_SYMMETRIC_SIZE holds the "
          "symmetric heap)" + said(printed));
    // Ranks 0 and 1 must reach each other's heap by loads and stores (NVSHMEM's P2P path).
    bool reach = true;
    if (drives()) reach = nvshmem_ptr(inbox_, peer()) != nullptr;
    agree(reach, "reach rank 0 or 1 by P2P",
          "rank " + std::to_string(peer()) + "'s symmetric heap is not reachable from rank " +
              std::to_string(job_.pe) + " by P2P (nvshmem_ptr is null): NVSHMEM would need a remote transport, "
              "and this engine measures its P2P path (NVSHMEM_REMOTE_TRANSPORT=none)");
    // Agreed like the NVSHMEM steps: the destructor's barrier must never meet a rank whose
    // constructor threw.
    make_on_all_ranks(group_, [&] {
      cuda::Stream zero(job_.device);
      COMMATLAS_GPU_CHECK(cudaMemsetAsync(signals_, 0, kSignalWords * sizeof(std::uint64_t), zero.get()));
      zero.synchronize();
      if (drives()) make_buffers();
      return true;
    });
  }

  ~NvshmemTransport() override {
    // Every rank's kernels are done before any symmetric memory goes (nvshmem_free is collective).
    try {
      group_.barrier();
    } catch (...) {
    }
    cuda::DeviceScope scope(job_.device, cuda::DeviceScope::NoThrow{});
    times_.reset();
    send_.reset();
    stream_.reset();
    // The symmetric memory goes with its members, signals first (the reverse of its allocation).
  }

  TransportClock clock() const override { return TransportClock::Stream; }
  std::string describe() const override { return "NVSHMEM (symmetric heap, put=" + std::string(to_string(put_)) + ")"; }
  bool supports(Protocol p) const override {
    return p == Protocol::PingPong || (p == Protocol::Bandwidth && put_ == NvshmemPut::Block);
  }
  bool resize(std::size_t bytes) override {
    bytes_ = bytes;  // inside the inbox, whose size is the largest; the words follow the size
    return true;
  }
  ProtocolWords words(Protocol p) const override {
    const int ctas = slicing(bytes_).ctas;
    const Accounting a = p == Protocol::PingPong ? nvshmem_pingpong_accounting(put_, bytes_, ctas)
                                                 : nvshmem_stream_accounting(bytes_, ctas);
    return {a.timing, a.latency_includes};
  }
  double min_sample_s() const override { return kNvshmemMinSampleSeconds; }
  std::vector<int> local_ends() const override { return drives() ? std::vector<int>{job_.pe} : std::vector<int>{}; }

  void fill_send(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(job_.device);
    cuda::fill_pattern_on_device(send_->data(), bytes, seed, stream_->get());
    stream_->synchronize();
  }
  void poison_recv(int, std::size_t bytes) override {
    cuda::DeviceScope scope(job_.device);
    cuda::poison_on_device(inbox_, bytes, stream_->get());
    stream_->synchronize();
  }
  std::size_t check_recv(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(job_.device);
    return cuda::find_mismatch_on_device(inbox_, bytes, seed, stream_->get());
  }

  // Every operation runs natively, in persistent kernels: the generic loop never calls these.
  void transfer(int, int, std::size_t) override { refuse("a generic transfer"); }
  void window(int, int, std::size_t) override { refuse("a generic window"); }
  void time(Protocol, std::int64_t, std::int64_t, std::vector<double>&, const std::function<void()>&) override {
    refuse("the generic loop");
  }

  bool run_native(Protocol p, std::size_t bytes, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
                  bool move) override {
    if (!drives()) return true;
    if (!supports(p)) refuse(std::string("protocol ") + protocol_name(p) + " with put=" + to_string(put_));
    const CtaSlicing s = slicing(bytes);
    const bool timer = job_.pe == kOriginEnd;
    // Both ends count alike, so both know what the signal words will read after this run.
    u64 arrived_before = arrived_;
    const u64 first_seq = answered_ + 1;
    const std::int64_t messages = samples * ops;
    if (p == Protocol::PingPong) {
      arrived_ += static_cast<u64>(messages + 1) * static_cast<u64>(s.ctas);
    } else {
      if (job_.pe == kPeerEnd) arrived_ += static_cast<u64>(messages) * static_cast<u64>(s.ctas);  // the receiver's
      answered_ += static_cast<u64>(messages);
      launches_ += 1;
    }
    // Test-only (COMMATLAS_TEST_NVSHMEM_NO_PEER): rank 1 launches nothing, so rank 0's kernel
    // waits for its first signal for good; only the watchdog can end the point (the device script
    // checks that it does, with an error record naming the point).
    if (job_.pe == kPeerEnd && test_no_peer()) return true;
    if (timer) ensure_times(samples + 1);
    Args a = args(bytes, s, move, timer);
    cuda::DeviceScope scope(job_.device);
    if (p == Protocol::PingPong) {
      // Every round trip of the batch in one kernel, stamped every `ops`.
      std::int64_t round_trips = messages, stamp_every = ops;
      int slices = s.ctas;
      void* params[] = {&a, &round_trips, &stamp_every, &arrived_before, &slices};
      launch(reinterpret_cast<const void*>(&pingpong_kernel), s.ctas, params);
    } else if (job_.pe == kOriginEnd) {
      std::int64_t n_samples = samples, n_ops = ops;
      u64 seq = first_seq, launch_count = launches_;
      void* params[] = {&a, &n_samples, &n_ops, &seq, &launch_count};
      launch(reinterpret_cast<const void*>(&stream_send_kernel), s.ctas, params);
    } else {
      std::int64_t n = messages;
      u64 seq = first_seq;
      int slices = s.ctas;
      void* params[] = {&a, &n, &seq, &arrived_before, &slices};
      launch(reinterpret_cast<const void*>(&stream_recv_kernel), 1, params);
    }
    stream_->synchronize();
    if (!timer) return true;
    std::vector<u64> t(static_cast<std::size_t>(samples + 1));
    COMMATLAS_GPU_CHECK(cudaMemcpy(t.data(), times_->data(), t.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    for (std::int64_t i = 0; i < samples; ++i)
      seconds.push_back(static_cast<double>(t[i + 1] - t[i]) * 1e-9 / static_cast<double>(ops));
    return true;
  }

 private:
  [[noreturn]] static void refuse(const std::string& what) {
    throw MeasurementError("the NVSHMEM transport runs no " + what + ": its protocols run natively");
  }
  bool drives() const { return job_.pe == kOriginEnd || job_.pe == kPeerEnd; }
  int peer() const { return job_.pe == kOriginEnd ? kPeerEnd : kOriginEnd; }
  CtaSlicing slicing(std::size_t bytes) const {
    return put_ == NvshmemPut::Thread ? CtaSlicing{1, bytes} : cta_slicing(bytes, max_ctas_);
  }

  // Every rank learns whether every rank managed `step`; a rank that did not gives its reason.
  void agree(bool ok, const std::string& step, const std::string& why) {
    if (group_.all(ok)) return;
    throw Skip(ok ? "another rank could not " + step + " (NVSHMEM)" : why);
  }

  // Cooperative: every CTA resident at once, or the launch fails (a CTA waiting for the whole
  // message would otherwise wait for a CTA that never gets an SM).
  void launch(const void* kernel, int ctas, void** params) {
    COMMATLAS_GPU_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(static_cast<unsigned>(ctas)), dim3(kNvshmemThreads),
                                                    params, 0, stream_->get()));
  }

  void make_buffers() {
    stream_ = std::make_unique<cuda::Stream>(job_.device);
    send_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, bytes_, job_.device);
    if (job_.pe == kOriginEnd) ensure_times(1024);  // rank 0 stamps the samples
    // With lazy module loading a kernel's first launch loads its module: load them now, untimed.
    cudaFuncAttributes attributes;
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, pingpong_kernel));
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, stream_send_kernel));
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, stream_recv_kernel));
  }

  void ensure_times(std::int64_t count) {
    if (static_cast<std::size_t>(count) <= times_capacity_) return;
    const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(count), 2 * times_capacity_);
    times_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, n * sizeof(u64), job_.device);
    times_capacity_ = n;
  }

  Args args(std::size_t bytes, const CtaSlicing& s, bool move, bool timer) const {
    Args a{};
    a.inbox = inbox_;
    a.src = send_->as<unsigned char>();
    a.signals = signals_;
    a.bytes = bytes;
    a.slice_bytes = s.slice_bytes;
    a.peer = peer();
    a.initiator = job_.pe == kOriginEnd;
    a.thread_put = put_ == NvshmemPut::Thread;
    a.move = move;
    a.times = timer ? times_->as<u64>() : nullptr;
    return a;
  }

  Group& group_;
  NvshmemPut put_;
  NvshmemJob job_;
  std::size_t bytes_ = 0;         // the message size in force
  std::size_t window_bytes_ = 0;  // every PE's inbox: rank 0's largest message, in 4 KiB pages
  int max_ctas_ = 1;              // CTAs of the largest grid: one per SM of rank 0's GPU
  SymmetricMemory inbox_memory_;
  SymmetricMemory signal_memory_;
  unsigned char* inbox_ = nullptr;    // inbox_memory_
  std::uint64_t* signals_ = nullptr;  // signal_memory_: kSignalWords words
  u64 arrived_ = 0;   // puts delivered into this PE's inbox so far, as its kArrived counts them
  u64 answered_ = 0;  // bandwidth: messages answered so far (kAnswered on the sender)
  u64 launches_ = 0;  // bandwidth: receiver kernels started (kReady on the sender)
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::GpuBuffer> send_;
  std::unique_ptr<cuda::GpuBuffer> times_;
  std::size_t times_capacity_ = 0;
};

const bool hooked = [] {
  NvshmemBuilt& built = nvshmem_built();
  built.unavailable = [](const Context& ctx) -> std::optional<std::string> {
    return nvshmem_refuse_job("", ctx.group.kind() == "mpi", ctx.group.size(), ctx.group.local_size(),
                              cuda::gpu_count());
  };
  built.make = [](Context& ctx, const Params& params, std::size_t bytes, std::size_t) -> std::unique_ptr<Transport> {
    return std::make_unique<NvshmemTransport>(ctx, nvshmem_put_from_string(params.text("put")), bytes);
  };
  return true;
}();

}  // namespace
}  // namespace commatlas
