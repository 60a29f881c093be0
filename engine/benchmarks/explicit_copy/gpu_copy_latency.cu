// gpu.copy_latency: what one small copy costs an application that waits for it: the API call,
// the launch, the copy and the synchronize, timed with the host clock, one copy per sample.
#include <cstring>

#include "backends/cuda/copy_buffers.h"
#include "backends/cuda/gpu_access.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas::gpu {
namespace {

class CopyLatencyWorkload final : public Workload {
 public:
  CopyLatencyWorkload(const Leg& leg, std::uint64_t bytes, std::uint64_t seed)
      : bytes_(bytes), seed_(seed), src_(leg.src, bytes), dst_(leg.dst, bytes), stream_(leg.exec_gpu) {
    for (const Endpoint* e : {&leg.src, &leg.dst})
      if (e->alloc.rfind("device", 0) == 0 && e->gpu != leg.exec_gpu) {
        enable_peer_access(leg.exec_gpu, e->gpu);
        enable_peer_access(e->gpu, leg.exec_gpu);
      }
    src_.fill_pattern(seed);
    dst_.poison();
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes_);
    a.timing = "host steady_clock around one cudaMemcpyAsync + cudaStreamSynchronize per sample";
    a.latency_includes = "API call + launch + copy + synchronize, as an application sees it";
    a.one_op_per_sample = true;
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    DeviceScope scope(stream_.device());
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE
    time_host_samples(samples, ops, seconds, [this, move] {
      if (move)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst_.pointer(), src_.pointer(), bytes_, cudaMemcpyDefault, stream_.get()));
      COMMATLAS_GPU_CHECK(cudaStreamSynchronize(stream_.get()));
    });
  }

  Verification verify() override { return dst_.check_pattern(seed_); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { dst_.poison(); }

  std::uint64_t bytes_, seed_;
  PlacedBuffer src_, dst_;
  Stream stream_;
};

class GpuCopyLatency final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"gpu.copy_latency",
                         Category::ExplicitCopy,
                         "gpu",
                         "launch-inclusive latency of one small cudaMemcpyAsync + synchronize: h2d, d2h, d2d, peer",
                         Metric::Latency,
                         RankRange{1, 1},
                         transfer_sizes(8, 64ull << 10),
                         {8, 4096, 64ull << 10}};
  }

  std::optional<std::string> unavailable(const Context&) const override { return no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (Path path : {Path::H2D, Path::D2H, Path::D2D, Path::Peer}) {
      if (path == Path::Peer && gpu_count() < 2) continue;
      CopySpec c;
      c.path = path;
      if (path == Path::H2D || path == Path::D2H) {
        c.host_alloc = "pinned";
        c.first_touch = "cpu";
      }
      if (path == Path::Peer) c.dst_gpu = 1;
      c.side = path == Path::H2D ? Side::Dst : Side::Src;
      out.push_back(to_params(c));
    }
    return out;
  }

  Movement movement(const Context&, const Params& params) const override { return copy_movement(params, Engine::Ce); }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<CopyLatencyWorkload>(legs_of(copy_spec_from(params)).front(), bytes, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(GpuCopyLatency);

}  // namespace
}  // namespace commatlas::gpu
