// gpu.copy_latency (the copy engines; an initiator names its own latency key): what one small copy
// costs an application that waits for it: the call, the launch, the copy and the synchronize,
// timed with the host clock, one copy per sample.
#include "backends/cuda/copy_buffers.h"
#include "benchmarks/explicit_copy/copy_family.h"
#include "core/harness.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class CopyLatencyWorkload final : public Workload {
 public:
  CopyLatencyWorkload(const cuda::CopyInitiator& initiator, const Params& params, const cuda::Leg& leg,
                      std::uint64_t bytes, std::uint64_t seed)
      : call_(initiator.info().call),
        bytes_(bytes),
        seed_(seed),
        src_(leg.src, bytes),
        dst_(leg.dst, bytes),
        stream_(leg.exec_gpu) {
    copier_ = initiator.prepare(params, leg, src_, dst_);
    src_.fill_pattern(seed);
    dst_.poison();
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes_);
    a.timing = "host steady_clock around one " + call_ + " + cudaStreamSynchronize per sample";
    a.latency_includes = "API call + launch + copy + synchronize, as an application sees it";
    a.one_op_per_sample = true;
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    cuda::DeviceScope scope(stream_.device());
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE
    time_host_samples(samples, ops, seconds, [this, move] {
      if (move) copier_->enqueue(bytes_, stream_);
      stream_.synchronize();
    });
  }

  Verification verify() override { return dst_.check_pattern(seed_); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { copier_->poison_destination(bytes_, stream_); }

  std::string call_;
  std::uint64_t bytes_, seed_;
  cuda::PlacedBuffer src_, dst_;
  cuda::Stream stream_;
  std::unique_ptr<cuda::LegCopier> copier_;
};

class GpuCopyLatency final : public CopyBenchmark {
 public:
  using CopyBenchmark::CopyBenchmark;

  BenchmarkInfo info() const override {
    return cuda::gpu_suite_info(
        initiator_->info().latency_key, Category::ExplicitCopy,
        "launch-inclusive latency of one small " + initiator_->info().call + " + synchronize: h2d, d2h, d2d, peer",
        Metric::Latency, transfer_sizes(8, 64ull << 10), {8, 4096, 64ull << 10});
  }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (cuda::Path path : {cuda::Path::H2D, cuda::Path::D2H, cuda::Path::D2D, cuda::Path::Peer}) {
      if (path == cuda::Path::Peer && cuda::gpu_count() < 2) continue;
      cuda::CopySpec c;
      c.path = path;
      if (path == cuda::Path::H2D || path == cuda::Path::D2H) {
        c.host_allocator = Allocator::Pinned;
        c.first_touch = "cpu";
      }
      if (path == cuda::Path::Peer) c.dst_gpu = 1;
      c.side = path == cuda::Path::H2D ? cuda::Side::Dst : cuda::Side::Src;
      out.push_back(cuda::copy_params(c, *initiator_));
    }
    return out;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<CopyLatencyWorkload>(
        *initiator_, params, cuda::legs_of(cuda::copy_spec_from(params)).front(), bytes, ctx.options.seed);
  }
};

std::unique_ptr<Benchmark> launch_latency(const cuda::InitiatorPtr& initiator) {
  if (initiator->info().latency_key.empty()) return nullptr;
  return std::make_unique<GpuCopyLatency>(initiator);
}

COMMATLAS_REGISTER_COPY_FAMILY(launch_latency);

}  // namespace
}  // namespace commatlas
