// gpu.pointer_chase: one GPU thread following a random chain through local HBM, peer HBM, pinned
// host memory and managed memory; host.pointer_chase_gpu_memory: a CPU thread doing the same
// through pinned and managed memory. Working sets from 4 KiB (L1) through L2 to far beyond it.
#include "backends/cuda/chase_chain.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"
#include "backends/cuda/kernels.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

// Loads per timed kernel: long enough that the kernel launch is under 1% of an L1-hit chase.
constexpr std::int64_t kStepsPerOp = 16384;

Params chase_params(cuda::Location l, int gpu, const char* chaser) {
  Params p = cuda::location_params(l, gpu);
  p.set("chaser", std::string(chaser));
  p.set("stride_bytes", std::int64_t{cuda::ChaseChain::kStride});
  p.set("loads_per_op", std::int64_t{kStepsPerOp});
  return p;
}

// A chase: dependent loads from the chain's memory by one GPU thread or one CPU thread.
Movement chase_movement(const Params& p, bool gpu_chases) {
  const Mechanism mechanism = gpu_chases ? Mechanism::GpuLoadStore : Mechanism::CpuLoadStore;
  if (p.entries().empty()) return movement_of_benchmark(Operation::LoadLatency, MoveDirection::Uni, mechanism);
  const cuda::Location l = cuda::location_from(p);
  const int gpu = static_cast<int>(p.integer("gpu"));
  Movement m =
      movement_between(Operation::LoadLatency, MoveDirection::Uni, mechanism, cuda::place_of(l, gpu, gpu_chases),
                       gpu_chases ? gpu_processor(gpu) : cpu_processor(std::nullopt), p,
                       {"stride_bytes", "loads_per_op", "managed_hint"});
  m.cache_working_set_per_byte = 1;
  return m;
}

// L1, L2 and HBM once each (x16 steps): building a 4 GiB chain cost more than every other point.
std::vector<std::uint64_t> chase_sizes() { return geometric_sizes(4096, 256ull << 20, 16); }
// Quick: a cache level and one size beyond the L2, so that a smoke run answers for memory too (a
// middle size, which the report would judge from these two, cost the quick run a second).
std::vector<std::uint64_t> chase_quick_sizes() { return {64ull << 10, 256ull << 20}; }

class GpuChaseWorkload final : public Workload {
 public:
  GpuChaseWorkload(cuda::Location where, int gpu, std::uint64_t bytes, std::uint64_t seed)
      : gpu_(gpu),
        chain_(where, gpu, bytes, seed),
        base_(chain_.kernel_base(gpu)),
        stream_(gpu),
        cursor_(cuda::MemoryKind::Device, sizeof(unsigned long long), gpu) {
    cuda::load_kernels(gpu);
    COMMATLAS_GPU_CHECK(cudaMemset(cursor_.data(), 0, sizeof(unsigned long long)));  // start at link 0
  }

  Accounting accounting() const override {
    Accounting a;
    a.timing = "CUDA events around kernels of " + std::to_string(kStepsPerOp) +
               " dependent loads each, queued behind a spin kernel; time per load";
    a.steps_per_op = kStepsPerOp;  // one op is a kernel; records carry one load
    a.latency_includes = "one dependent 8-byte load by one GPU thread (cache hits included at small working sets)";
    a.warm_steps = static_cast<double>(chain_.links());
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    cuda::DeviceScope scope(gpu_);
    cuda::time_event_samples({&stream_}, samples, ops, seconds, [this](std::size_t) {
      cuda::launch_chase(base_, cursor_.as<unsigned long long>(), kStepsPerOp, stream_.get());
      steps_ += kStepsPerOp;
    });
  }

  Verification verify() override {
    unsigned long long end = 0;
    COMMATLAS_GPU_CHECK(cudaMemcpy(&end, cursor_.data(), sizeof end, cudaMemcpyDeviceToHost));
    return chain_.check(end, steps_);
  }
  // Every kernel's steps are counted and the cursor must end where walking the chain that far
  // predicts: a chase that skipped loads ends elsewhere. No destination to poison.
  VerifyMethod verify_method() const override { return VerifyMethod::Chain; }

 private:
  void prepare_batch() override {}
  int gpu_;
  cuda::ChaseChain chain_;
  const unsigned char* base_;
  cuda::Stream stream_;
  cuda::GpuBuffer cursor_;
  std::uint64_t steps_ = 0;
};

class GpuPointerChase final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return cuda::gpu_suite_info(
        "gpu.pointer_chase", Category::DirectAccess,
        "one GPU thread chasing a random chain (256 B stride): local HBM, peer HBM, pinned host, managed",
        Metric::Latency, chase_sizes(), chase_quick_sizes(),
        // docs/tiers.md
        {{{{"allocator", to_string(Allocator::Managed)}},
          "the local chain's latency within 1% at every size, twice its cost"}});
  }

  std::optional<std::string> unavailable(const Context&) const override { return cuda::no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (cuda::Location l : cuda::locations(cuda::gpu_count(), false))
      if (l != cuda::Location::Pageable) out.push_back(chase_params(l, 0, "gpu"));
    return out;
  }

  Movement movement(const Context&, const Params& p) const override { return chase_movement(p, true); }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<GpuChaseWorkload>(cuda::location_from(params), static_cast<int>(params.integer("gpu")),
                                              bytes, ctx.options.seed);
  }
};

class HostChaseWorkload final : public Workload {
 public:
  HostChaseWorkload(cuda::Location where, int gpu, std::uint64_t bytes, std::uint64_t seed)
      : chain_(where, gpu, bytes, seed), base_(chain_.host_base()) {}

  Accounting accounting() const override {
    Accounting a;
    a.timing = "host steady_clock around chases of " + std::to_string(kStepsPerOp) + " dependent loads; time per load";
    a.steps_per_op = kStepsPerOp;
    a.latency_includes = "one dependent 8-byte load by one CPU thread (cache hits included at small working sets)";
    a.warm_steps = static_cast<double>(chain_.links());
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    time_host_samples(samples, ops, seconds, [this] {
      std::uint64_t offset = cursor_;
      for (std::int64_t s = 0; s < kStepsPerOp; ++s) offset = *reinterpret_cast<const volatile std::uint64_t*>(base_ + offset);
      cursor_ = offset;
      steps_ += kStepsPerOp;
    });
  }

  Verification verify() override { return chain_.check(cursor_, steps_); }
  VerifyMethod verify_method() const override { return VerifyMethod::Chain; }  // as gpu.pointer_chase

 private:
  void prepare_batch() override {}
  cuda::ChaseChain chain_;
  const unsigned char* base_;
  std::uint64_t cursor_ = 0;
  std::uint64_t steps_ = 0;
};

class HostChaseGpuMemory final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return cuda::gpu_suite_info(
        "host.pointer_chase_gpu_memory", Category::DirectAccess,
        "one CPU thread chasing a random chain (256 B stride) through pinned and managed memory "
        "(CPU-touched; and prefetched to GPU 0 first, so the CPU faults the pages back)",
        Metric::Latency, chase_sizes(), chase_quick_sizes(),
        // docs/tiers.md
        {{{{"allocator", to_string(Allocator::Managed)}, {"managed_hint", "prefetched"}},
          "the managed chain's latency within 5%; 4 GiB points cost 4-5 s each"}});
  }

  std::optional<std::string> unavailable(const Context&) const override { return cuda::no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (cuda::Location l : {cuda::Location::Pinned, cuda::Location::Managed, cuda::Location::ManagedPrefetched})
      out.push_back(chase_params(l, 0, "cpu"));
    return out;
  }

  Movement movement(const Context&, const Params& p) const override { return chase_movement(p, false); }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<HostChaseWorkload>(cuda::location_from(params), static_cast<int>(params.integer("gpu")),
                                               bytes, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(GpuPointerChase);
COMMATLAS_REGISTER_BENCHMARK(HostChaseGpuMemory);

}  // namespace
}  // namespace commatlas
