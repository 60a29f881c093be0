// CUDA IPC between two MPI ranks, one GPU each: the receiver exports its buffer once, the sender
// copies straight into it with a copy engine (cudaMemcpyAsync) or an SM copy kernel.
//   ipc.bandwidth: back-to-back copies 0 -> 1 behind a start-blocking kernel, timed on the sender.
//   ipc.pingpong:  copy + flag write into the peer, the peer's GPU spins on the flag and answers
//                  the same way; half the round trip, timed on rank 0.
// The receiver checks what landed in its buffer after the timed loop.
#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/memory.h"
#include "backends/mpi/ipc_exchange_mpi.h"
#include "benchmarks/point_to_point/ipc_signal.h"
#include "core/all_ranks.h"
#include "core/registry.h"
#include "core/sizes.h"
#include "backends/mpi/point_to_point.h"

namespace commatlas {
namespace {

constexpr int kOrigin = 0;
constexpr int kPeer = 1;

enum class IpcProtocol { PingPong, OneWay };
// What copies into the peer's mapped buffer: a copy engine or the SM copy kernel.
enum class IpcCopy { Ce, Sm };

std::uint64_t sender_seed(std::uint64_t run_seed, int rank) { return run_seed * 6151ull + static_cast<std::uint64_t>(rank) + 3; }

// What one active rank owns: the buffer it sends from, the inbox the peer writes into, the flag
// the peer bumps, and where its wait kernels report a timeout.
struct IpcEndpoint {
  GpuBuffer send;
  GpuBuffer inbox;
  GpuBuffer flag;
  GpuBuffer timed_out;
};

class IpcWorkload final : public Workload {
 public:
  IpcWorkload(Context& ctx, IpcProtocol protocol, IpcCopy engine, std::size_t bytes)
      : group_(ctx.group), protocol_(protocol), engine_(engine), bytes_(bytes), allocated_(bytes), seed_(ctx.options.seed),
        rank_(ctx.group.rank()), device_(ctx.group.local_rank() % gpu_count()), stream_(device_) {
    if (active()) {
      endpoint_ = make_on_all_ranks(group_, [&] {
        return std::make_unique<IpcEndpoint>(IpcEndpoint{GpuBuffer(MemoryKind::Device, bytes_, device_),
                                                         GpuBuffer(MemoryKind::Device, bytes_, device_),
                                                         GpuBuffer(MemoryKind::Device, sizeof(std::uint64_t), device_),
                                                         GpuBuffer(MemoryKind::Pinned, sizeof(int), device_)});
      });
    } else {
      make_on_all_ranks(group_, [] { return 0; });  // idle ranks still vote
    }
    std::vector<void*> exported;
    if (active()) {
      DeviceScope scope(device_);
      fill_pattern_on_device(endpoint_->send.data(), bytes_, sender_seed(seed_, rank_), stream_.get());
      poison_on_device(endpoint_->inbox.data(), bytes_, stream_.get());
      COMMATLAS_GPU_CHECK(cudaMemsetAsync(endpoint_->flag.data(), 0, sizeof(std::uint64_t), stream_.get()));
      *endpoint_->timed_out.as<int>() = 0;
      stream_.synchronize();
      exported = {endpoint_->inbox.data(), endpoint_->flag.data()};
    }
    const auto handles = exchange_ipc_handles(exported, 2);
    if (active()) {
      const int peer = rank_ == kOrigin ? kPeer : kOrigin;
      peer_inbox_ = std::make_unique<PeerMapping>(handles[peer][0], device_);
      peer_flag_ = std::make_unique<PeerMapping>(handles[peer][1], device_);
      sms_ = gpu::sm_count(device_);
    }
    group_.barrier();  // both mappings exist before anyone writes
  }

  ~IpcWorkload() override {
    // Unmap before the owner frees: every rank closes its mappings, then all free together.
    peer_inbox_.reset();
    peer_flag_.reset();
    try {
      group_.barrier();
    } catch (...) {
    }
  }

  // Inside the buffers of the largest size, whose handles were exchanged and mapped once: the
  // sent pattern is a function of the byte's index, so its prefix is the smaller message. The
  // inbox is poisoned here, before the runner's vote on the answer lets any peer write into it;
  // the round-trip counters go on from where they are (both ranks ran the same round trips).
  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;  // the same answer on every rank
    bytes_ = static_cast<std::size_t>(bytes);
    if (active()) {
      DeviceScope scope(device_);
      poison_on_device(endpoint_->inbox.data(), bytes_, stream_.get());
      stream_.synchronize();
    }
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    a.min_sample_s = kEventClockMinSampleSeconds;
    a.bytes_per_op = static_cast<double>(bytes_);
    const std::string copy = engine_ == IpcCopy::Ce ? "cudaMemcpyAsync (copy engine)" : "SM copy kernel (16-byte vectors)";
    if (protocol_ == IpcProtocol::OneWay) {
      a.timing = "CUDA events on rank 0's stream around back-to-back copies queued behind a start-blocking kernel "
                 "(BlockedStart), one MPI rank per GPU";
      a.latency_includes = "one " + copy + " from rank 0's GPU into rank 1's buffer mapped with cudaIpcOpenMemHandle; "
                           "handle exchange excluded";
    } else {
      a.timing = "CUDA events on rank 0's stream around a batch of round trips enqueued as they come (Immediate); "
                 "per-op time halved; one MPI rank per GPU";
      a.latency_includes = "half a round trip, GPU to GPU: " + copy + " into the peer's IPC-mapped buffer, a kernel "
                           "writing the peer's flag, the peer's GPU spinning on its flag then answering the same way; "
                           "kernel launches included, handle exchange excluded";
    }
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (!active()) return;
    std::vector<double> discarded;
    // Only rank 0's clock is reported; rank 1 enqueues the same operations to answer.
    std::vector<double>& out = rank_ == kOrigin ? seconds : discarded;
    const std::size_t first = out.size();
    if (protocol_ == IpcProtocol::OneWay) {
      if (rank_ != kOrigin) return;
      time_event_samples({&stream_}, samples, ops, out, [&](std::size_t) { copy_to_peer(); });
      return;
    }
    time_event_samples({&stream_}, samples, ops, out, [&](std::size_t) { round_trip(); }, LaunchMode::Immediate);
    if (*endpoint_->timed_out.as<volatile int>() != 0)
      throw MeasurementError("rank " + std::to_string(rank_) + " waited more than 10 s for its peer's IPC flag");
    for (std::size_t i = first; i < out.size(); ++i) out[i] /= 2;
  }

  Verification verify() override {
    group_.barrier();  // the sender's stream has drained (time_event_samples synchronises it)
    const bool receives = rank_ == kPeer || (rank_ == kOrigin && protocol_ == IpcProtocol::PingPong);
    if (!active() || !receives) return {true, 0, ""};
    const int from = rank_ == kOrigin ? kPeer : kOrigin;
    DeviceScope scope(device_);
    const std::size_t bad = find_mismatch_on_device(endpoint_->inbox.data(), bytes_, sender_seed(seed_, from), stream_.get());
    if (bad == bytes_) return {true, bytes_, ""};
    return {false, bytes_, "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " rank " +
                               std::to_string(from) + " wrote into rank " + std::to_string(rank_) + "'s IPC buffer differs"};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  bool active() const { return rank_ == kOrigin || rank_ == kPeer; }

  // Each receiver poisons its own inbox; the peer writes into it, so no rank may start the batch
  // before every inbox is poisoned: the barrier here, not only the harness's, guarantees it.
  void prepare_batch() override {
    if (active()) {
      DeviceScope scope(device_);
      poison_on_device(endpoint_->inbox.data(), bytes_, stream_.get());
      stream_.synchronize();
    }
    group_.barrier();
  }

  void copy_to_peer() {
    if (planted_no_move()) return;  // test-only (COMMATLAS_TEST_SKIP_MOVE): CE and SM alike
    if (engine_ == IpcCopy::Ce)
      COMMATLAS_GPU_CHECK(cudaMemcpyAsync(peer_inbox_->data(), endpoint_->send.data(), bytes_, cudaMemcpyDeviceToDevice, stream_.get()));
    else
      gpu::launch_copy(peer_inbox_->data(), endpoint_->send.data(), bytes_, gpu::KernelShape{}, sms_, stream_.get());
  }

  // Rank 0 sends on odd counts and waits for even ones; rank 1 the other way round. Both ranks
  // run the same number of round trips (the harness broadcasts its counts), so the counters agree.
  void round_trip() {
    const std::uint64_t ping = ++sequence_, pong = ++sequence_;
    auto* own_flag = endpoint_->flag.as<std::uint64_t>();
    auto* timed_out = static_cast<int*>(endpoint_->timed_out.device_view());
    auto* peer_flag = static_cast<std::uint64_t*>(peer_flag_->data());
    if (rank_ == kOrigin) {
      copy_to_peer();
      enqueue_signal(peer_flag, ping, stream_.get());
      enqueue_wait(own_flag, pong, timed_out, stream_.get());
    } else {
      enqueue_wait(own_flag, ping, timed_out, stream_.get());
      copy_to_peer();
      enqueue_signal(peer_flag, pong, stream_.get());
    }
  }

  Group& group_;
  IpcProtocol protocol_;
  IpcCopy engine_;
  std::size_t bytes_;
  std::size_t allocated_;  // the message size the buffers were made (and exchanged) for
  std::uint64_t seed_;
  int rank_;
  int device_;
  Stream stream_;
  std::unique_ptr<IpcEndpoint> endpoint_;
  std::unique_ptr<PeerMapping> peer_inbox_;
  std::unique_ptr<PeerMapping> peer_flag_;
  int sms_ = 0;
  std::uint64_t sequence_ = 0;
};

std::string engine_name(IpcCopy e) { return e == IpcCopy::Ce ? "ce" : "sm"; }

class IpcBenchmark final : public Benchmark {
 public:
  explicit IpcBenchmark(IpcProtocol protocol) : protocol_(protocol) {}

  BenchmarkInfo info() const override {
    const bool latency = protocol_ == IpcProtocol::PingPong;
    BenchmarkInfo i{latency ? "ipc.pingpong" : "ipc.bandwidth", Category::PointToPoint, Interface::CudaIpc, "mpi-gpu",
                    latency ? "CUDA IPC ping-pong between ranks 0 and 1 (copy + flag in peer memory), half round trip"
                            : "CUDA IPC copy from rank 0's GPU straight into rank 1's buffer, back to back",
                    latency ? Metric::Latency : Metric::Bandwidth, RankRange{2, 0}, {}, {8, 1ull << 20, 256ull << 20}};
    i.default_sizes = latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 4ull << 30);
    if (latency) i.quick_sizes = {8, 4096, 1ull << 20};
    return i;
  }

  std::optional<std::string> unavailable(const Context& ctx) const override {
    if (ctx.group.kind() != "mpi") return "needs an MPI job with one rank per GPU (start the engine under mpiexec)";
    const int gpus = gpu_count();
    if (ctx.group.local_size() < 2) return "ranks 0 and 1 must share a node (CUDA IPC is node-local)";
    if (test_share_gpu() && gpus >= 1) return std::nullopt;  // ranks share GPUs (device_ = local rank % GPUs)
    if (gpus < 2) return "needs 2 GPUs on the node, found " + std::to_string(gpus);
    if (ctx.group.local_size() > gpus) return "more ranks on the node than GPUs: IPC here pairs one GPU per rank";
    return std::nullopt;
  }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (IpcCopy e : {IpcCopy::Ce, IpcCopy::Sm})
      out.push_back(Params{{"engine", engine_name(e)},
                           {"gpus", std::string(test_share_gpu() && gpu_count() < 2 ? "0,0" : "0,1")},
                           {"direction", std::string(protocol_ == IpcProtocol::OneWay ? "uni" : "half_round_trip")}});
    return out;
  }

  // Device buffers of ranks 0 and 1; a one-way copy into the peer's buffer is the send of this
  // mechanism, so it competes with MPI and NCCL sends between the same GPUs.
  Movement movement(const Context&, const Params& p) const override {
    const Mechanism mechanism = p.has("engine") && p.text("engine") == "sm" ? Mechanism::CudaIpcSm : Mechanism::CudaIpcCe;
    return p2p_movement(protocol_ == IpcProtocol::OneWay ? P2pProtocol::Unidirectional : P2pProtocol::PingPong, mechanism,
                        gpu_memory(gpu_of_rank(p, 0), "device"), gpu_memory(gpu_of_rank(p, 1), "device"));
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const IpcCopy engine = params.text("engine") == "ce" ? IpcCopy::Ce : IpcCopy::Sm;
    return std::make_unique<IpcWorkload>(ctx, protocol_, engine, static_cast<std::size_t>(bytes));
  }

 private:
  IpcProtocol protocol_;
};

COMMATLAS_REGISTER_BENCHMARK(IpcBenchmark, IpcProtocol::OneWay);
COMMATLAS_REGISTER_BENCHMARK(IpcBenchmark, IpcProtocol::PingPong);

}  // namespace
}  // namespace commatlas
