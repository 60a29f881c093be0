// The GPU-initiated link across processes (transport/gpu_initiated.h): ranks 0 and 1, one GPU
// each, map each other's inbox and control words with CUDA IPC once, then their kernels store and
// flag straight into the peer's memory (gpu_initiated.ipc.pingpong, gpu_initiated.ipc.bandwidth;
// suite mpi-gpu), for a tree without the transport layer's protocol workload: where it is present,
// transport/gpu_initiated_mpi.cu registers the same keys as a transport. NVIDIA only.
#if !__has_include("transport/protocol_workload.h") && !defined(COMMATLAS_HIP)

#include "transport/gpu_initiated.h"

#include "backends/cuda/device_pattern.h"
#include "backends/mpi/ipc_exchange_mpi.h"
#include "core/all_ranks.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas::gi {
namespace {

constexpr int kOrigin = 0;
constexpr int kPeer = 1;

enum class Kind { PingPong, OneWay };

std::uint64_t rank_seed(std::uint64_t run_seed, int rank) { return run_seed * 7919ull + static_cast<std::uint64_t>(rank) + 5; }

class IpcWorkload final : public Workload {
 public:
  IpcWorkload(Context& ctx, Kind protocol, LaunchMode mode, std::size_t bytes)
      : group_(ctx.group), protocol_(protocol), mode_(mode), bytes_(bytes), allocated_(bytes), rank_(ctx.group.rank()) {
    const int device = ctx.group.local_rank() % gpu_count();
    if (active()) {
      side_ = make_on_all_ranks(group_, [&] { return std::make_unique<Side>(device, bytes_); });
    } else {
      make_on_all_ranks(group_, [] { return 0; });  // idle ranks still vote
    }
    std::vector<void*> exported;
    if (active()) {
      side_->initiator = rank_ == kOrigin;
      side_->seed = rank_seed(ctx.options.seed, rank_);
      side_->peer_seed = rank_seed(ctx.options.seed, rank_ == kOrigin ? kPeer : kOrigin);
      DeviceScope scope(device);
      fill_pattern_on_device(side_->send.data(), bytes_, side_->seed, side_->stream.get());
      side_->stream.synchronize();
      exported = {side_->inbox.data(), side_->control.data()};
    }
    const auto handles = exchange_ipc_handles(exported, 2);
    if (active()) {
      const int peer = rank_ == kOrigin ? kPeer : kOrigin;
      peer_inbox_ = std::make_unique<PeerMapping>(handles[peer][0], device);
      peer_control_ = std::make_unique<PeerMapping>(handles[peer][1], device);
      side_->peer_inbox = static_cast<unsigned char*>(peer_inbox_->data());
      side_->peer_control = static_cast<std::uint64_t*>(peer_control_->data());
      link_ = std::make_unique<Link>(std::vector<Side*>{side_.get()});
      link_->poison(bytes_);
    }
    group_.barrier();  // both mappings exist and both inboxes are poisoned before anyone stores
  }

  ~IpcWorkload() override {
    // Unmap before the owner frees: every rank closes its mappings, then all free together.
    peer_inbox_.reset();
    peer_control_.reset();
    try {
      group_.barrier();
    } catch (...) {
    }
  }

  Accounting accounting() const override {
    Accounting a = protocol_ == Kind::PingPong ? pingpong_accounting(mode_, bytes_, "CUDA IPC mapping")
                                                   : stream_accounting(bytes_, "CUDA IPC mapping");
    a.timing += "; one MPI rank per GPU, rank 0's figure";
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (!active()) return;
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE): flags only
    if (protocol_ == Kind::PingPong)
      link_->pingpong(mode_, bytes_, samples, ops, move, seconds);
    else
      link_->stream(bytes_, samples, ops, move, seconds);
  }

  Verification verify() override {
    group_.barrier();  // the peer's kernels are done (each rank synchronised its stream)
    if (!active()) return {true, 0, ""};
    const std::string bad = link_->check(bytes_, protocol_ == Kind::PingPong);
    const bool receives = protocol_ == Kind::PingPong || rank_ == kPeer;
    return {bad.empty(), bad.empty() && receives ? bytes_ : 0, bad};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;  // the same answer on every rank
    bytes_ = static_cast<std::size_t>(bytes);
    if (active()) link_->poison(bytes_);
    return true;
  }

 private:
  bool active() const { return rank_ == kOrigin || rank_ == kPeer; }

  // The peer stores into this rank's inbox, so no rank may start before every inbox is poisoned.
  void prepare_batch() override {
    if (active()) link_->poison(bytes_);
    group_.barrier();
  }

  Group& group_;
  Kind protocol_;
  LaunchMode mode_;
  std::size_t bytes_;
  std::size_t allocated_;
  int rank_;
  std::unique_ptr<Side> side_;
  std::unique_ptr<PeerMapping> peer_inbox_;
  std::unique_ptr<PeerMapping> peer_control_;
  std::unique_ptr<Link> link_;
};

class IpcBenchmark final : public Benchmark {
 public:
  explicit IpcBenchmark(Kind protocol) : protocol_(protocol) {}

  BenchmarkInfo info() const override {
    const bool latency = protocol_ == Kind::PingPong;
    BenchmarkInfo i{latency ? "gpu_initiated.ipc.pingpong" : "gpu_initiated.ipc.bandwidth",
                    Category::PointToPoint,
                    Interface::SmKernel,
                    "mpi-gpu",
                    latency ? "GPU-initiated ping-pong between ranks 0 and 1 (kernel stores + flag in the peer's "
                              "IPC-mapped memory), half round trip, per launch mode"
                            : "GPU-initiated one-way messages rank 0 -> rank 1 (streaming stores, a flag per chunk, "
                              "CUDA IPC), back to back in a persistent kernel",
                    latency ? Metric::Latency : Metric::Bandwidth,
                    RankRange{2, 0},
                    {},
                    {}};
    i.default_sizes = latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30);
    i.quick_sizes = latency ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                            : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20};
    return i;
  }

  std::optional<std::string> unavailable(const Context& ctx) const override {
    if (ctx.group.kind() != "mpi") return "needs an MPI job with one rank per GPU (start the engine under mpiexec)";
    const int gpus = gpu_count();
    if (ctx.group.local_size() < 2) return "ranks 0 and 1 must share a node (CUDA IPC is node-local)";
    if (gpus < 2) return "needs 2 GPUs on the node, found " + std::to_string(gpus);
    if (ctx.group.local_size() > gpus) return "more ranks on the node than GPUs: IPC here pairs one GPU per rank";
    return std::nullopt;
  }

  std::vector<Params> variants(const Context&) const override {
    return link_variants(protocol_ == Kind::PingPong, "cuda_ipc");
  }

  Movement movement(const Context&, const Params& p) const override {
    return link_movement(protocol_ == Kind::PingPong, p, /*ranks=*/true);
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<IpcWorkload>(ctx, protocol_, launch_mode_from_string(params.text("launch_mode")),
                                         static_cast<std::size_t>(bytes));
  }

 private:
  Kind protocol_;
};

COMMATLAS_REGISTER_BENCHMARK(IpcBenchmark, Kind::PingPong);
COMMATLAS_REGISTER_BENCHMARK(IpcBenchmark, Kind::OneWay);

}  // namespace
}  // namespace commatlas::gi

#endif  // COMMATLAS_HIP
