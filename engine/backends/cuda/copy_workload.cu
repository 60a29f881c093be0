#include "backends/cuda/copy_workload.h"

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"
#include "backends/cuda/kernels.h"

namespace commatlas::gpu {

struct CopyWorkload::LegState {
  LegState(const Leg& leg, std::size_t bytes) : src(leg.src, bytes), dst(leg.dst, bytes), stream(leg.exec_gpu) {}
  PlacedBuffer src;
  PlacedBuffer dst;
  Stream stream;
  void* src_ptr = nullptr;
  void* dst_ptr = nullptr;
  int sms = 0;
};

namespace {

// cudaMemcpyAsync on pageable memory waits for the stream (h2d) or for the copy (d2h) before it
// returns, so it cannot be queued behind a kernel that waits for the host: it would deadlock.
// Managed memory kept on the host by advice behaves the same (seen on H200: every such copy
// held the host until the start-blocking kernel timed out).
bool host_synchronous(const Endpoint& e) { return e.alloc == "pageable" || (e.alloc == "managed" && !e.hint.empty()); }

bool host_synchronous(const CopySetup& setup) {
  if (setup.engine != Engine::Ce) return false;
  for (const Leg& leg : setup.legs)
    if (host_synchronous(leg.src) || host_synchronous(leg.dst)) return true;
  return false;
}

}  // namespace

std::string copy_timing_text(std::size_t legs, bool host_synchronous) {
  std::string text =
      host_synchronous
          ? "CUDA events on the driving GPU's stream around a batch of copies enqueued without a blocked start "
            "(cudaMemcpyAsync on pageable or host-preferred managed memory holds the host, so host-side work is included)"
          : "CUDA events on the driving GPU's stream around a batch of copies queued behind a spin kernel "
            "(blocked start), so they run back-to-back without launch gaps";
  if (legs > 1)
    text += "; " + std::to_string(legs) + " copies at once, one stream each, the sample ends when the slowest does";
  return text;
}

// Figures from the committed 2x H200 runs (results/nvidia-h200-x2/gpu-suite-x8); docs/tiers.md
// lists them per rule.
TierRule device_pool_tier_rule() {
  return {{{"device_alloc", "device_pool"}},
          "device_pool gives the device figure within 0.5% from 1 MiB up (CE and SM, h2d/d2h/d2d)"};
}

BenchmarkInfo copy_benchmark_info(Engine engine, const std::string& suffix, const std::string& what,
                                  std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes) {
  const bool ce = engine == Engine::Ce;
  BenchmarkInfo i{(ce ? "gpu.copy_ce" : "gpu.copy_sm") + suffix,
                       Category::ExplicitCopy,
                       "gpu",
                       what + (ce ? "copy engines (cudaMemcpyAsync)" : "SM copy kernel (uint4, unroll 4, grid-stride)"),
                       Metric::Bandwidth,
                       RankRange{1, 1},
                       std::move(sizes),
                       std::move(quick_sizes)};
  i.full_tier = {device_pool_tier_rule()};
  return i;
}

std::unique_ptr<Workload> prepare_copy(const Params& params, Engine engine, std::uint64_t bytes, std::uint64_t seed) {
  const CopySpec spec = copy_spec_from(params);
  CopySetup setup;
  setup.legs = legs_of(spec);
  setup.engine = engine;
  if (engine == Engine::Sm) setup.shape = shape_from(params);
  setup.bytes = bytes;
  setup.seed = seed;
  return std::make_unique<CopyWorkload>(setup);
}

CopyWorkload::CopyWorkload(const CopySetup& setup) : setup_(setup) {
  if (setup_.engine == Engine::Sm)
    if (auto problem = shape_problem(setup_.shape)) throw UsageError("bad kernel shape: " + *problem);
  std::uint64_t host_bytes = 0;
  for (const Leg& leg : setup_.legs)
    for (const Endpoint* e : {&leg.src, &leg.dst})
      if (e->alloc == "pinned" || e->alloc == "registered" || e->alloc == "pageable") host_bytes += setup_.bytes;
  if (host_bytes) require_host_bytes(host_bytes);

  for (const Leg& leg : setup_.legs) {
    auto state = std::make_unique<LegState>(leg, setup_.bytes);
    if (setup_.engine == Engine::Sm) {
      // The kernel dereferences both ends from the driving GPU: peer mappings, host mappings.
      state->src_ptr = state->src.kernel_pointer(leg.exec_gpu);
      state->dst_ptr = state->dst.kernel_pointer(leg.exec_gpu);
      state->sms = sm_count(leg.exec_gpu);
      load_kernels(leg.exec_gpu);
    } else {
      // A peer copy without peer access would be staged through the host: enable it both ways
      // so the copy engines move the data over the GPU link.
      for (const Endpoint* e : {&leg.src, &leg.dst})
        if (e->alloc.rfind("device", 0) == 0 && e->gpu != leg.exec_gpu) {
          enable_peer_access(leg.exec_gpu, e->gpu);
          enable_peer_access(e->gpu, leg.exec_gpu);
        }
      state->src_ptr = state->src.pointer();
      state->dst_ptr = state->dst.pointer();
    }
    state->src.fill_pattern(setup_.seed);
    state->dst.poison();
    legs_.push_back(std::move(state));
  }
}

CopyWorkload::~CopyWorkload() = default;

Accounting CopyWorkload::accounting() const {
  Accounting a;
  a.min_sample_s = kEventClockMinSampleSeconds;
  a.bytes_per_op = bytes_per_op(setup_.legs, setup_.bytes);
  a.buffer_bytes = static_cast<double>(setup_.bytes) * static_cast<double>(setup_.legs.size());
  a.timing = copy_timing_text(setup_.legs.size(), host_synchronous(setup_));
  return a;
}

void CopyWorkload::prepare_batch() {
  for (const auto& leg : legs_) {
    if (setup_.engine == Engine::Sm) {
      // The copy kernel's own GPU stores the poison through the kernel's pointer: managed pages
      // stay where the warm-up's kernels moved them, as the timed kernels will find them.
      DeviceScope on(leg->stream.device());
      poison_with_kernel(leg->dst_ptr, setup_.bytes, leg->stream.get());
      leg->stream.synchronize();
    } else {
      // The setup's toucher poisons again (the owning GPU for device memory, a GPU memset for
      // pinned memory, the CPU for the rest): managed memory first touched by the CPU starts each
      // batch on the host, where the record places it.
      leg->dst.poison();
    }
  }
}

void CopyWorkload::enqueue(std::size_t i) {
  if (planted_no_move()) return;  // test-only (COMMATLAS_TEST_SKIP_MOVE): CE and SM copies alike
  LegState& leg = *legs_[i];
  if (setup_.engine == Engine::Ce)
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(leg.dst_ptr, leg.src_ptr, setup_.bytes, cudaMemcpyDefault, leg.stream.get()));
  else
    launch_copy(leg.dst_ptr, leg.src_ptr, setup_.bytes, setup_.shape, leg.sms, leg.stream.get());
}

void CopyWorkload::run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) {
  std::vector<const Stream*> streams;
  for (const auto& leg : legs_) streams.push_back(&leg->stream);
  DeviceScope scope(legs_.front()->stream.device());
  time_event_samples(streams, samples, ops, seconds, [this](std::size_t i) {
    DeviceScope on(legs_[i]->stream.device());
    enqueue(i);
  }, host_synchronous(setup_) ? LaunchMode::Immediate : LaunchMode::BlockedStart);
}

bool CopyWorkload::resize(std::uint64_t bytes) {
  for (const auto& leg : legs_)
    if (!leg->src.resizable() || !leg->dst.resizable()) return false;
  // The source's prefix already holds the pattern (a function of the byte's index); the
  // destination's holds the larger size's copy, which a copy that did nothing would pass.
  for (const auto& leg : legs_) {
    leg->src.resize(bytes);
    leg->dst.resize(bytes);
    leg->dst.poison();
  }
  setup_.bytes = bytes;
  return true;
}

Verification CopyWorkload::verify() {
  Verification all;
  for (const auto& leg : legs_) {
    Verification v = leg->dst.check_pattern(setup_.seed);
    if (!v.ok) return v;
    all.bytes_checked += v.bytes_checked;
  }
  all.ok = true;
  return all;
}

}  // namespace commatlas::gpu
