// The GPU-initiated mechanism's one-process benchmarks over peer access (gpu_initiated.pingpong,
// gpu_initiated.bandwidth; suite gpu), for a tree without the transport layer's protocol workload:
// where it is present, transport/gpu_initiated.cu registers the same keys as a transport.
#if !__has_include("transport/protocol_workload.h") && !defined(COMMATLAS_HIP)

#include "transport/gpu_initiated.h"

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas::gi {
namespace {

// ---- one process, two GPUs, peer access -------------------------------------------------------

enum class Kind { PingPong, OneWay };

std::uint64_t side_seed(std::uint64_t run_seed, int side) { return run_seed * 7919ull + static_cast<std::uint64_t>(side) + 5; }

class PeerWorkload final : public Workload {
 public:
  PeerWorkload(Context& ctx, Kind protocol, LaunchMode mode, int gpu_a, int gpu_b, std::size_t bytes)
      : protocol_(protocol), mode_(mode), bytes_(bytes), allocated_(bytes), a_(gpu_a, bytes), b_(gpu_b, bytes),
        link_({&a_, &b_}) {
    gpu::enable_peer_access(gpu_a, gpu_b);
    gpu::enable_peer_access(gpu_b, gpu_a);
    a_.initiator = true;
    a_.seed = b_.peer_seed = side_seed(ctx.options.seed, 0);
    b_.seed = a_.peer_seed = side_seed(ctx.options.seed, 1);
    a_.peer_inbox = b_.inbox.as<unsigned char>();
    a_.peer_control = b_.control.as<std::uint64_t>();
    b_.peer_inbox = a_.inbox.as<unsigned char>();
    b_.peer_control = a_.control.as<std::uint64_t>();
    for (Side* s : {&a_, &b_}) {
      DeviceScope scope(s->device);
      fill_pattern_on_device(s->send.data(), bytes_, s->seed, s->stream.get());
    }
    link_.poison(bytes_);
  }

  Accounting accounting() const override {
    return protocol_ == Kind::PingPong ? pingpong_accounting(mode_, bytes_, "peer access")
                                           : stream_accounting(bytes_, "peer access");
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE): flags only
    if (protocol_ == Kind::PingPong)
      link_.pingpong(mode_, bytes_, samples, ops, move, seconds);
    else
      link_.stream(bytes_, samples, ops, move, seconds);
  }

  Verification verify() override {
    const std::string bad = link_.check(bytes_, protocol_ == Kind::PingPong);
    return {bad.empty(), bad.empty() ? bytes_ : 0, bad};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    link_.poison(bytes_);
    return true;
  }

 private:
  void prepare_batch() override { link_.poison(bytes_); }

  Kind protocol_;
  LaunchMode mode_;
  std::size_t bytes_;
  std::size_t allocated_;
  Side a_, b_;
  Link link_;
};

class PeerBenchmark final : public Benchmark {
 public:
  explicit PeerBenchmark(Kind protocol) : protocol_(protocol) {}

  BenchmarkInfo info() const override {
    const bool latency = protocol_ == Kind::PingPong;
    BenchmarkInfo i{latency ? "gpu_initiated.pingpong" : "gpu_initiated.bandwidth",
                    Category::PointToPoint,
                    Interface::SmKernel,
                    "gpu",
                    latency ? "GPU-initiated ping-pong between GPUs 0 and 1 (kernel stores + flag in peer memory, peer "
                              "access), half round trip, per launch mode"
                            : "GPU-initiated one-way messages GPU 0 -> GPU 1 (streaming stores, a flag per chunk, peer "
                              "access), back to back in a persistent kernel",
                    latency ? Metric::Latency : Metric::Bandwidth,
                    RankRange{1, 1},
                    {},
                    {}};
    i.default_sizes = latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30);
    i.quick_sizes = latency ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                            : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20};
    return i;
  }

  std::optional<std::string> unavailable(const Context&) const override {
    if (auto why = gpu::no_gpu_reason()) return why;
    return gpu::fewer_than_two_gpus();
  }

  std::vector<Params> variants(const Context&) const override {
    return link_variants(protocol_ == Kind::PingPong, "peer_access");
  }

  Movement movement(const Context&, const Params& p) const override {
    return link_movement(protocol_ == Kind::PingPong, p, /*ranks=*/false);
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const LaunchMode mode = launch_mode_from_string(params.text("launch_mode"));
    return std::make_unique<PeerWorkload>(ctx, protocol_, mode, gpu_of_rank(params, 0).value_or(0),
                                          gpu_of_rank(params, 1).value_or(1), static_cast<std::size_t>(bytes));
  }

 private:
  Kind protocol_;
};

COMMATLAS_REGISTER_BENCHMARK(PeerBenchmark, Kind::PingPong);
COMMATLAS_REGISTER_BENCHMARK(PeerBenchmark, Kind::OneWay);

}  // namespace
}  // namespace commatlas::gi

#endif  // COMMATLAS_HIP
