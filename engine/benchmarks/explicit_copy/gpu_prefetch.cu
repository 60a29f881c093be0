// gpu.prefetch: cudaMemPrefetchAsync of managed memory as a transfer, host -> GPU and GPU -> host.
// Each timed prefetch finds every page on the other side, because an untimed prefetch back
// precedes it (a prefetch of pages already in place moves nothing and would time nothing).
#include "backends/cuda/copy_buffers.h"
#include "backends/cuda/device_pattern.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class PrefetchWorkload final : public Workload {
 public:
  PrefetchWorkload(cuda::Path path, int gpu, std::uint64_t bytes, std::uint64_t seed)
      : path_(path),
        gpu_(gpu),
        bytes_(bytes),
        seed_(seed),
        buffer_(cuda::BufferSpec{Allocator::Managed, gpu, "cpu", ""}, bytes),
        stream_(gpu),
        start_(gpu),
        stop_(gpu) {
    int concurrent = 0;
    COMMATLAS_GPU_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, gpu));
    if (!concurrent) throw Skip("GPU " + std::to_string(gpu) + " cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess = 0)");
    buffer_.fill_pattern(seed);
    // h2d starts from the host (where the CPU fill left the pages); d2h from the GPU.
    if (path_ == cuda::Path::D2H) prefetch(cuda::gpu_location(gpu_));
    stream_.synchronize();
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes_);
    a.timing = "CUDA events around each cudaMemPrefetchAsync, after an untimed prefetch back to the other side";
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const cudaMemLocation there = path_ == cuda::Path::H2D ? cuda::gpu_location(gpu_) : cuda::host_location();
    const cudaMemLocation back = path_ == cuda::Path::H2D ? cuda::host_location() : cuda::gpu_location(gpu_);
    cuda::DeviceScope scope(gpu_);
    for (std::int64_t s = 0; s < samples; ++s) {
      double total = 0;
      for (std::int64_t k = 0; k < ops; ++k) {
        prefetch(back);
        COMMATLAS_GPU_CHECK(cudaEventRecord(start_.get(), stream_.get()));
        prefetch(there);
        COMMATLAS_GPU_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
        COMMATLAS_GPU_CHECK(cudaEventSynchronize(stop_.get()));
        float ms = 0;
        COMMATLAS_GPU_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        total += static_cast<double>(ms) * 1e-3;
      }
      seconds.push_back(total / static_cast<double>(ops));
    }
  }

  // Prefetching moves pages, never changes them: the data must still be the pattern. Nothing can
  // be poisoned (the prefetched bytes are the source's own), so the record says "unchanged": the
  // check proves the prefetches did no harm, not that they moved the pages; what guards the
  // timing instead is the untimed prefetch back before each timed one, so each finds every page
  // on the other side.
  Verification verify() override { return buffer_.check_pattern(seed_); }
  VerifyMethod verify_method() const override { return VerifyMethod::Unchanged; }

 private:
  void prepare_batch() override {}

  void prefetch(cudaMemLocation where) {
    COMMATLAS_GPU_CHECK(cudaMemPrefetchAsync(buffer_.pointer(), bytes_, where, 0, stream_.get()));
  }
  cuda::Path path_;
  int gpu_;
  std::uint64_t bytes_, seed_;
  cuda::PlacedBuffer buffer_;
  cuda::Stream stream_;
  cuda::Event start_, stop_;
};

class GpuPrefetch final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return cuda::gpu_suite_info("gpu.prefetch", Category::ExplicitCopy,
                                "cudaMemPrefetchAsync of managed memory host->GPU and GPU->host", Metric::Bandwidth,
                                cuda::gpu_bandwidth_sizes(), cuda::gpu_bandwidth_quick_sizes());
  }

  std::optional<std::string> unavailable(const Context&) const override { return cuda::no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (const char* path : {"h2d", "d2h"})
      out.push_back(Params{{"path", std::string(path)},
                           {"allocator", to_string(Allocator::Managed)},
                           {"first_touch", std::string("cpu")},
                           {"gpu", std::int64_t{0}}});
    return out;
  }

  // The managed pages move between host memory and the GPU's memory; the allocator is managed at
  // both ends, first touched by the CPU.
  Movement movement(const Context&, const Params& p) const override {
    if (p.entries().empty()) return movement_of_benchmark(Operation::Copy, MoveDirection::Uni, Mechanism::Prefetch);
    const cuda::Path path = cuda::parse_enum(p.text("path"), {cuda::Path::H2D, cuda::Path::D2H}, "path");
    const int gpu = static_cast<int>(p.integer("gpu"));
    const Allocator allocator = parse_allocator(p.text("allocator"));
    const std::string touch = p.text("first_touch");
    const auto host = host_memory(std::nullopt, allocator, touch), device = gpu_memory(gpu, allocator, touch);
    return path == cuda::Path::H2D
               ? movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::Prefetch, host, device)
               : movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::Prefetch, device, host);
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const cuda::Path path = cuda::parse_enum(params.text("path"), {cuda::Path::H2D, cuda::Path::D2H}, "path");
    return std::make_unique<PrefetchWorkload>(path, static_cast<int>(params.integer("gpu")), bytes, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(GpuPrefetch);

}  // namespace
}  // namespace commatlas
