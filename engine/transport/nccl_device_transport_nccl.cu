// NCCL's device API as a transport (nccl_device.h says what it measures and how): the kernels, the
// host setup (a communicator split once from the rank-per-GPU NCCL team's, a device communicator,
// a symmetric window per rank) and the registration of nccl_device.pingpong and
// nccl_device.bandwidth (suite mpi-gpu).
//
// The device API exists from NCCL 2.28 (nccl_device.h). An engine built against an older NCCL, or
// against RCCL, still registers both benchmarks, and they skip with that reason; at run time the
// loaded NCCL must be one the kernels may run with (nccl_device_code_unusable), and every
// refusal of NCCL's (no symmetric memory, no device communicator, ranks not load/store
// accessible) becomes a skip with NCCL's own words. Setup steps that are collective over the
// communicator are agreed between ranks first, so a rank that cannot go on never leaves the
// others waiting inside NCCL.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/nccl/nccl_comm.h"
#include "core/affinity.h"
#include "core/all_ranks.h"
#include "core/error.h"
#include "core/sizes.h"
#include "transport/nccl_device.h"
#include "transport/transport.h"

// The device API is the NCCL's whose nccl.h this file compiles with: a newer nccl_device.h found
// elsewhere on the include path (the CUDA toolkit's, beside an older NCCL's headers) does not count.
#if !defined(COMMATLAS_HIP) && defined(__has_include) && NCCL_VERSION_CODE >= 22800
#if __has_include(<nccl_device.h>)
#define COMMATLAS_NCCL_DEVICE_API 1
#endif
#endif

#ifdef COMMATLAS_NCCL_DEVICE_API
#include <nccl_device.h>

#include <cuda/atomic>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/memory.h"
#include "backends/nccl/nccl_check.h"
#endif

namespace commatlas {
namespace {

#ifdef COMMATLAS_NCCL_DEVICE_API

using u64 = unsigned long long;

// ---- kernels ----------------------------------------------------------------------------------

struct Args {
  ncclDevComm comm;               // NCCL's device communicator (its resources: barriers, LL slots)
  ncclWindow_t window;            // this rank's inbox window; the peer's inbox through LSA pointers
  ncclLsaBarrierHandle barriers;  // one LSA barrier per CTA, over ranks 0 and 1
  ncclLLA2AHandle ll;             // the LL protocol's slots (one CTA)
  ncclTeam_t pair;                // ranks 0 and 1 as an NCCL team
  int peer;                       // the peer's rank in the communicator
  const unsigned char* src;       // this rank's message (device memory)
  unsigned char* inbox;           // this rank's window memory, as this GPU addresses it
  std::size_t bytes;
  std::size_t slice_bytes;        // per CTA (lsa_barrier)
  bool initiator;                 // rank 0: sends first, stamps the samples
  bool move;                      // false: the planted no-op (syncs without the payload)
  u64* times;                     // %globaltimer stamps (rank 0), else null
  unsigned int* grid;             // [0] CTAs arrived, [1] generation: the grid barrier of this GPU
};

// Every CTA of the kernel (co-resident: launched cooperatively) meets here; what any CTA did
// before is seen by every CTA after (device scope). `generation` is thread 0's count of passes.
__device__ void grid_sync(const Args& a, unsigned int& generation) {
  __syncthreads();
  if (gridDim.x == 1) return;
  if (threadIdx.x == 0) {
    ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> arrived(a.grid[0]), passes(a.grid[1]);
    if (arrived.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1) {
      arrived.store(0u, ::cuda::memory_order_relaxed);
      passes.store(generation + 1, ::cuda::memory_order_release);
    } else {
      while (passes.load(::cuda::memory_order_acquire) == generation) {
      }
    }
    generation += 1;
  }
  __syncthreads();
}

__device__ unsigned int grid_generation(const Args& a) {
  return ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device>(a.grid[1]).load(::cuda::memory_order_relaxed);
}

// This CTA's slice of the message into the peer's window: 16-byte streaming stores, then the tail.
__device__ void store_slice(const Args& a, unsigned char* peer_inbox) {
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * a.slice_bytes;
  const std::size_t end = begin + a.slice_bytes < a.bytes ? begin + a.slice_bytes : a.bytes;
  if (!a.move || begin >= end) return;
  const std::size_t vectors = (end - begin) / 16;
  const auto* s = reinterpret_cast<const int4*>(a.src + begin);
  auto* d = reinterpret_cast<int4*>(peer_inbox + begin);
  for (std::size_t i = threadIdx.x; i < vectors; i += blockDim.x) __stcs(d + i, __ldg(s + i));
  const std::size_t tail = begin + vectors * 16;
  if (end - tail >= 8 && threadIdx.x == 0)
    *reinterpret_cast<u64*>(peer_inbox + tail) = *reinterpret_cast<const u64*>(a.src + tail);
  for (std::size_t i = tail + (end - tail) / 8 * 8 + threadIdx.x; i < end; i += blockDim.x) peer_inbox[i] = a.src[i];
}

// Ping-pong over LSA barriers: `round_trips` after an untimed handshake, rank 0's CTA 0 stamping
// every `stamp_every`. Each half: the sending side's CTAs store their slices and sync their
// barriers (the arrival releases the stores); the receiving side's CTAs sync theirs (the wait
// acquires them), then meet, so the answer leaves only after the whole message is in.
__global__ void __launch_bounds__(kNcclDeviceThreads, 1)
    pingpong_barrier_kernel(Args a, std::int64_t round_trips, std::int64_t stamp_every) {
  ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), a.comm, a.pair, a.barriers, blockIdx.x);
  auto* peer_inbox = static_cast<unsigned char*>(ncclGetPeerPointer(a.window, 0, a.peer));
  unsigned int generation = threadIdx.x == 0 ? grid_generation(a) : 0;
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);  // the handshake: every CTA pair runs
  grid_sync(a, generation);
  if (stamps) a.times[0] = cuda::device_time_ns();
  for (std::int64_t r = 0; r < round_trips; ++r) {
    for (int half = 0; half < 2; ++half) {
      if ((half == 0) == a.initiator) {
        store_slice(a, peer_inbox);
        bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);
      } else {
        bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);
        grid_sync(a, generation);
      }
    }
    if (stamps && (r + 1) % stamp_every == 0) a.times[(r + 1) / stamp_every] = cuda::device_time_ns();
  }
}

// Pack i of the message: 8 bytes, zero-padded past the end.
__device__ u64 load_pack(const Args& a, int i) {
  const std::size_t at = 8 * static_cast<std::size_t>(i);
  if (at + 8 <= a.bytes) return *reinterpret_cast<const u64*>(a.src + at);
  u64 v = 0;
  for (std::size_t b = at; b < a.bytes; ++b) v |= static_cast<u64>(a.src[b]) << (8 * (b - at));
  return v;
}

__device__ void store_pack(const Args& a, int i, u64 v) {
  const std::size_t at = 8 * static_cast<std::size_t>(i);
  if (at + 8 <= a.bytes) {
    *reinterpret_cast<u64*>(a.inbox + at) = v;
    return;
  }
  for (std::size_t b = at; b < a.bytes; ++b) a.inbox[b] = static_cast<unsigned char>(v >> (8 * (b - at)));
}

// Ping-pong by NCCL's LL protocol, one CTA, a pack per thread: the message goes into the peer's
// slots of this epoch, the receiver copies it into its inbox (the planted no-op sends zeros and
// copies nothing), and both end the epoch once the round trip is done.
__global__ void __launch_bounds__(kNcclDeviceThreads, 1)
    pingpong_ll_kernel(Args a, std::int64_t round_trips, std::int64_t stamp_every) {
  ncclLLA2ASession<ncclCoopCta> ll(ncclCoopCta(), a.comm, a.pair, a.ll, /*block=*/0, /*maxElts=*/kNcclLlPacks);
  const int other = 1 - a.pair.rank;
  const int packs = static_cast<int>((a.bytes + 7) / 8);
  const int i = static_cast<int>(threadIdx.x);
  const bool stamps = a.times != nullptr && threadIdx.x == 0;
  auto send = [&] {
    if (i < packs) ll.send(other, i, a.move ? load_pack(a, i) : 0ull);
  };
  auto receive = [&] {
    if (i < packs) {
      const u64 v = ll.template recv<u64>(i);
      if (a.move) store_pack(a, i, v);
    }
  };
  for (std::int64_t r = -1; r < round_trips; ++r) {  // r == -1: the untimed handshake
    if (a.initiator) {
      send();
      receive();
    } else {
      receive();
      __syncthreads();  // the whole message is in before any of the answer leaves
      send();
    }
    ll.endEpoch(ncclCoopCta());
    if (stamps && (r + 1) % stamp_every == 0) a.times[(r + 1) / stamp_every] = cuda::device_time_ns();
  }
}

// One-way messages: `samples` x `ops` from rank 0, every CTA syncing its barrier once per message
// (the sender's arrival releases its slice, the receiver's wait acquires it); after each sample one
// more sync, whose wait on the sender passes once every receiving CTA has seen the last message.
__global__ void __launch_bounds__(kNcclDeviceThreads, 1) stream_kernel(Args a, std::int64_t samples, std::int64_t ops) {
  ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), a.comm, a.pair, a.barriers, blockIdx.x);
  auto* peer_inbox = static_cast<unsigned char*>(ncclGetPeerPointer(a.window, 0, a.peer));
  unsigned int generation = threadIdx.x == 0 ? grid_generation(a) : 0;
  const bool stamps = a.times != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);  // the handshake
  grid_sync(a, generation);
  if (stamps) a.times[0] = cuda::device_time_ns();
  for (std::int64_t s = 0; s < samples; ++s) {
    for (std::int64_t k = 0; k < ops; ++k) {
      if (a.initiator) store_slice(a, peer_inbox);
      bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);
    }
    bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);  // the receiver has every slice
    grid_sync(a, generation);
    if (stamps) a.times[s + 1] = cuda::device_time_ns();
  }
}

// ---- host -------------------------------------------------------------------------------------

bool test_no_peer() {
  const char* v = std::getenv("COMMATLAS_TEST_NCCL_DEVICE_NO_PEER");
  return v && *v && std::strcmp(v, "0") != 0;
}

int compiled_version() { return NCCL_VERSION_CODE; }

// NCCL's words for a failed call: its error string and, where it kept one, its last error.
std::string nccl_words(ncclResult_t rc) {
  std::string text = ncclGetErrorString(rc);
  const char* detail = ncclGetLastError(nullptr);
  if (detail && *detail) text += ": " + std::string(detail);
  return text;
}

std::optional<std::string> loaded_version_unusable() {
  int loaded = 0;
  if (const ncclResult_t rc = ncclGetVersion(&loaded); rc != ncclSuccess) return "ncclGetVersion failed: " + nccl_words(rc);
  return nccl_device_code_unusable(compiled_version(), loaded);
}

// The device API's own communicator: split once from the rank-per-GPU team's (collective; every
// rank reaches it in the same order), so the windows and device communicators made on it leave the
// communicator the nccl.* benchmarks time as it was. Kept for the process's life, as the team is.
struct ApiComm {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int ranks = 0;
  int device = 0;
};

const ApiComm& api_comm(Context& ctx) {
  static std::optional<ApiComm> made;
  static std::string failed;
  if (made) return *made;
  if (!failed.empty()) throw Skip(failed);
  const nccl::NcclTeam& team = nccl::nccl_team(nccl::NcclLaunch::RankPerProcess, ctx);
  const nccl::NcclMember& m = *team.members().front();
  ncclComm_t comm = nullptr;
  ncclResult_t rc;
  {
    cuda::DeviceScope scope(m.device);
    HelperThreadScope helpers;  // the new communicator's proxy threads (core/affinity.h)
    rc = ncclCommSplit(m.comm.get(), 0, m.rank, &comm, nullptr);
  }
  if (rc != ncclSuccess || comm == nullptr) {
    failed = "NCCL split no communicator for its device API (ncclCommSplit: " + nccl_words(rc) + ")";
    throw Skip(failed);
  }
  ApiComm api{comm, 0, 0, m.device};
  if ((rc = ncclCommUserRank(comm, &api.rank)) != ncclSuccess || (rc = ncclCommCount(comm, &api.ranks)) != ncclSuccess) {
    failed = "NCCL's split communicator for its device API does not say its ranks: " + nccl_words(rc);
    throw Skip(failed);
  }
  made = api;
  return *made;
}

// RAII over NCCL's setup objects: each is released by whoever made it, in reverse order.
class DevComm {
 public:
  DevComm() = default;
  DevComm(const DevComm&) = delete;
  DevComm& operator=(const DevComm&) = delete;
  ~DevComm() {
    if (comm_) ncclDevCommDestroy(comm_, &dev_);
  }
  ncclResult_t create(ncclComm_t comm, const ncclDevCommRequirements& reqs) {
    const ncclResult_t rc = ncclDevCommCreate(comm, &reqs, &dev_);
    if (rc == ncclSuccess) comm_ = comm;
    return rc;
  }
  const ncclDevComm& get() const { return dev_; }

 private:
  ncclComm_t comm_ = nullptr;
  ncclDevComm dev_{};
};

class NcclMemory {
 public:
  NcclMemory() = default;
  NcclMemory(const NcclMemory&) = delete;
  NcclMemory& operator=(const NcclMemory&) = delete;
  ~NcclMemory() {
    if (ptr_) ncclMemFree(ptr_);
  }
  ncclResult_t allocate(std::size_t bytes) { return ncclMemAlloc(&ptr_, bytes); }
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

class Window {
 public:
  Window() = default;
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  ~Window() {
    if (window_) ncclCommWindowDeregister(comm_, window_);
  }
  // NCCL_WIN_COLL_SYMMETRIC: every rank registers the same size at the same step (the
  // documented way to make a window the device API may address).
  ncclResult_t register_memory(ncclComm_t comm, void* ptr, std::size_t bytes) {
    comm_ = comm;
    return ncclCommWindowRegister(comm, ptr, bytes, &window_, NCCL_WIN_COLL_SYMMETRIC);
  }
  ncclWindow_t get() const { return window_; }

 private:
  ncclComm_t comm_ = nullptr;
  ncclWindow_t window_ = nullptr;
};

class NcclDeviceTransport final : public Transport {
 public:
  // Collective: every rank of the communicator creates the device communicator and registers a
  // window (NCCL requires all of them); ranks 0 and 1 drive the two ends.
  NcclDeviceTransport(Context& ctx, NcclDeviceSignal signal, std::size_t bytes) : group_(ctx.group), signal_(signal) {
    if (auto why = loaded_version_unusable()) throw Skip(*why);
    api_ = api_comm(ctx);
    if (api_.ranks < 2)
      throw Skip("NCCL's device API between ranks 0 and 1 needs 2 ranks, the job has " + std::to_string(api_.ranks));
    // Rank 0's size and SM count on every rank: symmetric memory wants the same sizes everywhere.
    bytes_ = static_cast<std::size_t>(group_.broadcast(static_cast<std::int64_t>(bytes)));
    if (auto why = nccl_device_refuse_size(signal_, bytes_)) throw Skip(*why);
    window_bytes_ = std::max<std::size_t>((bytes_ + 4095) / 4096 * 4096, 4096);
    max_ctas_ = static_cast<int>(group_.broadcast(cuda::sm_count(api_.device)));
    cuda::DeviceScope scope(api_.device);
    make_device_comm();
    make_window();
    // Agreed like the NCCL steps: the destructor's barrier must never meet a rank whose
    // constructor threw (a failure here on one rank only would leave the others waiting in it).
    make_on_all_ranks(group_, [&] {
      if (drives()) make_buffers();
      return true;
    });
  }

  ~NcclDeviceTransport() override {
    // Every rank's kernels are done before any window goes away (each rank maps its peers').
    try {
      group_.barrier();
    } catch (...) {
    }
    cuda::DeviceScope scope(api_.device, cuda::DeviceScope::NoThrow{});
    times_.reset();
    grid_.reset();
    send_.reset();
    stream_.reset();
  }

  TransportClock clock() const override { return TransportClock::Stream; }
  std::string describe() const override { return "NCCL device API (symmetric windows, " + std::string(to_string(signal_)) + ")"; }
  bool supports(Protocol p) const override { return p == Protocol::PingPong || (p == Protocol::Bandwidth && signal_ == NcclDeviceSignal::LsaBarrier); }
  bool resize(std::size_t bytes) override {
    bytes_ = bytes;  // inside the window, whose size is the largest; the words follow the size
    return true;
  }
  ProtocolWords words(Protocol p) const override {
    const CtaSlicing s = cta_slicing(bytes_, max_ctas_);
    const Accounting a = p == Protocol::PingPong ? nccl_device_pingpong_accounting(signal_, bytes_, s.ctas)
                                                 : nccl_device_stream_accounting(bytes_, s.ctas);
    return {a.timing, a.latency_includes};
  }
  double min_sample_s() const override { return kNcclDeviceMinSampleSeconds; }
  std::vector<int> local_ends() const override { return drives() ? std::vector<int>{api_.rank} : std::vector<int>{}; }

  void fill_send(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(api_.device);
    cuda::fill_pattern_on_device(send_->data(), bytes, seed, stream_->get());
    stream_->synchronize();
  }
  void poison_recv(int, std::size_t bytes) override {
    cuda::DeviceScope scope(api_.device);
    cuda::poison_on_device(inbox_.get(), bytes, stream_->get());
    stream_->synchronize();
  }
  std::size_t check_recv(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(api_.device);
    return cuda::find_mismatch_on_device(inbox_.get(), bytes, seed, stream_->get());
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
    // Test-only (COMMATLAS_TEST_NCCL_DEVICE_NO_PEER): rank 1 launches nothing, so rank 0's kernel
    // waits at its first barrier for good; only the watchdog can end the point (the device script
    // checks that it does, with an error record naming the point).
    if (api_.rank == kPeerEnd && test_no_peer()) return true;
    if (!supports(p)) refuse(std::string("protocol ") + protocol_name(p) + " with signal " + to_string(signal_));
    const bool ll = signal_ == NcclDeviceSignal::Ll;
    const CtaSlicing s = ll ? CtaSlicing{1, bytes} : cta_slicing(bytes, max_ctas_);
    const bool timer = api_.rank == kOriginEnd;
    if (timer) ensure_times(samples + 1);
    Args a = args(bytes, s, move, timer);
    // Ping-pong: every round trip of the batch, stamped every `ops`; stream: samples x ops messages.
    std::int64_t first = p == Protocol::PingPong ? samples * ops : samples;
    std::int64_t second = ops;
    void* params[] = {&a, &first, &second};
    const void* kernel = p == Protocol::Bandwidth ? reinterpret_cast<const void*>(&stream_kernel)
                         : ll                     ? reinterpret_cast<const void*>(&pingpong_ll_kernel)
                                                  : reinterpret_cast<const void*>(&pingpong_barrier_kernel);
    cuda::DeviceScope scope(api_.device);
    // Cooperative: every CTA resident at once, or the launch fails (the grid barrier spins).
    COMMATLAS_GPU_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(static_cast<unsigned>(s.ctas)), dim3(kNcclDeviceThreads), params, 0,
                                                    stream_->get()));
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
    throw MeasurementError("the NCCL device-API transport runs no " + what + ": its protocols run natively");
  }
  bool drives() const { return api_.rank == kOriginEnd || api_.rank == kPeerEnd; }
  int peer() const { return api_.rank == kOriginEnd ? kPeerEnd : kOriginEnd; }

  // Every rank learns whether every rank managed `step`; a rank that did not gives its reason.
  void agree(bool ok, const std::string& step, const std::string& why) {
    if (group_.all(ok)) return;
    throw Skip(ok ? "another rank could not " + step + " (NCCL's device API)" : why);
  }

  void make_device_comm() {
#ifdef NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
    ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
#else
    ncclDevCommRequirements reqs{};
#endif
    // Barriers of ranks 0 and 1 only (a barrier of the whole LSA team would wait for ranks that run
    // no kernel), one per CTA; the LL slots of one CTA.
    const ncclTeam_t pair{2, api_.rank == kPeerEnd ? 1 : 0, 1};
    ncclDevResourceRequirements barrier_req{}, ll_req{};
    COMMATLAS_NCCL(ncclLsaBarrierCreateRequirement(pair, max_ctas_, &barriers_, &barrier_req));
    COMMATLAS_NCCL(ncclLLA2ACreateRequirement(1, ncclLLA2ACalcSlots(kNcclLlPacks, 8), &ll_, &ll_req));
    barrier_req.next = &ll_req;
    ll_req.next = nullptr;
    reqs.resourceRequirementsList = &barrier_req;
    const ncclResult_t rc = devcomm_.create(api_.comm, reqs);
    agree(rc == ncclSuccess, "create a device communicator",
          "NCCL made no device communicator (ncclDevCommCreate: " + nccl_words(rc) + ")");
    // Ranks 0 and 1 must reach each other's memory with loads and stores (one LSA team).
    bool reach = true;
    std::string why;
    if (drives()) {
      const ncclDevComm& d = devcomm_.get();
      const int peer_lsa = d.lsaRank + (peer() - api_.rank);
      reach = peer_lsa >= 0 && peer_lsa < d.lsaSize;
      why = "ranks 0 and 1 are not load/store accessible to each other (this rank's NCCL LSA team has " +
            std::to_string(d.lsaSize) + (d.lsaSize == 1 ? " rank" : " ranks") +
            "): NCCL's device API reaches such a peer only over the network (GIN)";
    }
    agree(reach, "reach rank 0 or 1 by loads and stores", why);
  }

  void make_window() {
    const ncclResult_t alloc = inbox_.allocate(window_bytes_);
    agree(alloc == ncclSuccess, "allocate its window",
          "ncclMemAlloc of " + format_size(window_bytes_) + " failed: " + nccl_words(alloc));
    const ncclResult_t reg = window_.register_memory(api_.comm, inbox_.get(), window_bytes_);
    agree(reg == ncclSuccess && window_.get() != nullptr, "register its window",
          reg != ncclSuccess ? "ncclCommWindowRegister failed: " + nccl_words(reg)
                             : "NCCL registered no symmetric window (NCCL_WIN_ENABLE=0 or NCCL_CUMEM_ENABLE=0?)");
  }

  void make_buffers() {
    stream_ = std::make_unique<cuda::Stream>(api_.device);
    send_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, bytes_, api_.device);
    grid_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, 2 * sizeof(unsigned int), api_.device);
    COMMATLAS_GPU_CHECK(cudaMemset(grid_->data(), 0, grid_->bytes()));
    if (api_.rank == kOriginEnd) ensure_times(1024);  // rank 0 stamps the samples
    // With lazy module loading a kernel's first launch loads its module: load them now, untimed.
    cudaFuncAttributes attributes;
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, pingpong_barrier_kernel));
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, pingpong_ll_kernel));
    COMMATLAS_GPU_CHECK(cudaFuncGetAttributes(&attributes, stream_kernel));
  }

  void ensure_times(std::int64_t count) {
    if (static_cast<std::size_t>(count) <= times_capacity_) return;
    const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(count), 2 * times_capacity_);
    times_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, n * sizeof(u64), api_.device);
    times_capacity_ = n;
  }

  Args args(std::size_t bytes, const CtaSlicing& s, bool move, bool timer) const {
    Args a{};
    a.comm = devcomm_.get();
    a.window = window_.get();
    a.barriers = barriers_;
    a.ll = ll_;
    a.pair = ncclTeam_t{2, api_.rank == kPeerEnd ? 1 : 0, 1};
    a.peer = peer();
    a.src = send_->as<unsigned char>();
    a.inbox = inbox_.get();
    a.bytes = bytes;
    a.slice_bytes = s.slice_bytes;
    a.initiator = api_.rank == kOriginEnd;
    a.move = move;
    a.times = timer ? times_->as<u64>() : nullptr;
    a.grid = grid_->as<unsigned int>();
    return a;
  }

  Group& group_;
  NcclDeviceSignal signal_;
  ApiComm api_;
  std::size_t bytes_ = 0;         // the message size in force
  std::size_t window_bytes_ = 0;  // every rank's window: rank 0's largest message, in 4 KiB pages
  int max_ctas_ = 1;              // CTAs of the largest grid: one per SM of rank 0's GPU
  ncclLsaBarrierHandle barriers_{};
  ncclLLA2AHandle ll_{};
  // Released in reverse: the buffers, the window, its memory, the device communicator.
  DevComm devcomm_;
  NcclMemory inbox_;
  Window window_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::GpuBuffer> send_;
  std::unique_ptr<cuda::GpuBuffer> grid_;
  std::unique_ptr<cuda::GpuBuffer> times_;
  std::size_t times_capacity_ = 0;
};

#endif  // COMMATLAS_NCCL_DEVICE_API

// Why this build has no device API at all, or nullopt.
std::optional<std::string> not_built() {
#ifdef COMMATLAS_NCCL_DEVICE_API
  return std::nullopt;
#elif defined(COMMATLAS_HIP)
  return std::string("RCCL has no NCCL device API (nccl_device.h, NCCL 2.28+)");
#else
  return nccl_no_device_api(NCCL_VERSION_CODE);
#endif
}

TransportSpec spec() {
  TransportSpec s{
      Mechanism::NcclDevice, "mpi-gpu",
      [](const Context& ctx) -> std::optional<std::string> {
        if (auto why = not_built()) return why;
        if (auto why = nccl::nccl_unavailable(nccl::NcclLaunch::RankPerProcess, ctx, 2)) return why;
#ifdef COMMATLAS_NCCL_DEVICE_API
        if (auto why = loaded_version_unusable()) return why;
#endif
        return std::nullopt;
      },
      [](Context& ctx, const Params& params, std::size_t bytes, std::size_t) -> std::unique_ptr<Transport> {
#ifdef COMMATLAS_NCCL_DEVICE_API
        return std::make_unique<NcclDeviceTransport>(ctx, nccl_device_signal_from_string(params.text("signal")), bytes);
#else
        (void)ctx, (void)params, (void)bytes;
        throw Skip(*not_built());
#endif
      },
      {{Protocol::PingPong, nccl_device_info(true)}, {Protocol::Bandwidth, nccl_device_info(false)}}};
  s.variants = [](const Context&, Protocol p) { return nccl_device_variants(p == Protocol::PingPong); };
  s.movement = [](const Context&, const Params& p, Protocol protocol) {
    return nccl_device_movement(protocol == Protocol::PingPong, p);
  };
  return s;
}

const bool registered = register_transport(spec());

}  // namespace
}  // namespace commatlas
