// gpu.copy_launch: what launching costs a small GPU 0 -> GPU 1 copy, the same copy three ways
// (the record's launch_mode):
//   launch_included  one copy per sample, the host waits for it (host steady_clock)
//   back_to_back     copies queued behind a start-blocking kernel, CUDA events per sample
//   graph            `ops` copies captured once into a CUDA graph and replayed, CUDA events around
//                    each replay (as nccl-tests -G)
// for each GPU copy initiator (copy/copy_initiator.h: the copy engines and the SM copy
// kernel), whose one copy on raw addresses it times. Per-copy time in each mode, so the gap between
// modes is the launch's cost.
#include <algorithm>
#include <map>

#include "copy/copy_initiator.h"
#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch_timing.h"
#include "core/harness.h"
#include "core/launch_mode.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

using Mode = OpLaunch;
constexpr Mode kModes[] = {Mode::LaunchIncluded, Mode::BackToBack, Mode::Graph};

const char* mode_name(Mode m) { return to_string(m); }
Mode mode_from(const std::string& text) { return op_launch_from(text, {Mode::LaunchIncluded, Mode::BackToBack, Mode::Graph}); }

// One copy in the record's words: the two first initiators keep the words their records have
// always had; another is named by its call.
std::string copy_words(const cuda::CopyInitiator& initiator) {
  if (initiator.mechanism() == Mechanism::CopyEngine) return "cudaMemcpyAsync (copy engine)";
  if (initiator.mechanism() == Mechanism::SmCopy) return "SM copy kernel";
  return initiator.info().call;
}

class CopyLaunchWorkload final : public Workload {
 public:
  CopyLaunchWorkload(const cuda::CopyInitiator& initiator, const Params& params, Mode mode, int src_gpu, int dst_gpu,
                     std::size_t bytes, std::uint64_t seed)
      : copy_words_(copy_words(initiator)),
        mode_(mode),
        bytes_(bytes),
        allocated_(bytes),
        seed_(seed),
        src_(cuda::MemoryKind::Device, bytes, src_gpu),
        dst_(cuda::MemoryKind::Device, bytes, dst_gpu),
        stream_(src_gpu) {
    cuda::enable_peer_access(src_gpu, dst_gpu);
    cuda::enable_peer_access(dst_gpu, src_gpu);
    copier_ = initiator.device_copier(src_gpu, params);
    cuda::DeviceScope scope(src_gpu);
    cuda::fill_pattern_on_device(src_.data(), bytes_, seed_, stream_.get());
    cuda::poison_on_device(dst_.data(), bytes_, stream_.get());
    stream_.synchronize();
  }

  ~CopyLaunchWorkload() override {
    cuda::DeviceScope scope(stream_.device(), cuda::DeviceScope::NoThrow{});
    for (auto& [ops, exec] : graphs_) (void)cudaGraphExecDestroy(exec);
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes_);
    cuda::set_launch_sampling(a, mode_);
    const std::string& copy = copy_words_;
    switch (mode_) {
      case Mode::Persistent:  // not a mode of this benchmark: mode_from refuses it
        throw UsageError("launch_mode persistent is not measured by this benchmark");
      case Mode::LaunchIncluded:
        a.timing = "host steady_clock around one " + copy + " + cudaStreamSynchronize per sample";
        a.latency_includes = "API call + launch + copy + synchronize of one copy GPU 0 -> GPU 1 (peer access)";
        break;
      case Mode::BackToBack:
        a.timing = "CUDA events around back-to-back " + copy + " calls queued behind a start-blocking kernel (BlockedStart)";
        a.latency_includes = "one copy GPU 0 -> GPU 1 (peer access) in a back-to-back stream of them: launch overlapped, "
                             "per-copy GPU time";
        break;
      case Mode::Graph:
        a.timing = "CUDA events around one replay of a CUDA graph of `ops` " + copy + " nodes, captured once (as "
                   "nccl-tests -G), launched as it comes (Immediate)";
        a.latency_includes = "one copy GPU 0 -> GPU 1 (peer access) as a node of a replayed CUDA graph";
        break;
    }
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    cuda::DeviceScope scope(stream_.device());
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE)
    // Graph replays are launched as they come: behind a start-blocking kernel, launching a graph
    // of many copy-engine nodes blocked the host until the blocking kernel gave up (10 s, on
    // 2x H100); a replay is one enqueue, so nothing needs holding back. The planted no-op replays
    // an empty graph of the same count.
    cuda::time_launched(
        mode_, {&stream_}, samples, ops, seconds,
        [&](std::size_t) {
          if (move) copy();
        },
        [&](std::size_t) { return graph_of(move ? ops : -ops); }, cuda::LaunchMode::Immediate);
  }

  Verification verify() override {
    cuda::DeviceScope scope(stream_.device());
    const std::size_t bad = cuda::find_mismatch_on_device(dst_.data(), bytes_, seed_, stream_.get());
    if (bad == bytes_) return {true, bytes_, ""};
    return {false, bytes_, "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " copied into GPU " +
                               std::to_string(dst_.device()) + " differs"};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    for (auto& [ops, exec] : graphs_) (void)cudaGraphExecDestroy(exec);  // their nodes copy the old size
    graphs_.clear();
    prepare_batch();
    return true;
  }

 private:
  void prepare_batch() override {
    cuda::DeviceScope scope(stream_.device());
    cuda::poison_on_device(dst_.data(), bytes_, stream_.get());
    stream_.synchronize();
  }

  void copy() { copier_->enqueue(dst_.data(), src_.data(), bytes_, stream_); }

  // A graph of |ops| copies (ops < 0: none, the planted no-op's stand-in), captured on first use.
  cudaGraphExec_t graph_of(std::int64_t ops) {
    auto it = graphs_.find(ops);
    if (it != graphs_.end()) return it->second;
    cudaGraph_t graph = nullptr;
    COMMATLAS_GPU_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
    for (std::int64_t k = 0; k < ops; ++k) copy();
    COMMATLAS_GPU_CHECK(cudaStreamEndCapture(stream_.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
    (void)cudaGraphDestroy(graph);
    COMMATLAS_GPU_CHECK(rc);
    graphs_[ops] = exec;
    return exec;
  }

  std::string copy_words_;  // one copy, in the record's timing text
  Mode mode_;
  std::size_t bytes_;
  std::size_t allocated_;
  std::uint64_t seed_;
  cuda::GpuBuffer src_, dst_;
  cuda::Stream stream_;
  std::unique_ptr<cuda::DeviceCopier> copier_;
  std::map<std::int64_t, cudaGraphExec_t> graphs_;
};

// Every copy initiator, by name ("ce" before "sm"): registration order across files is not fixed.
std::vector<cuda::InitiatorPtr> initiators() {
  std::vector<cuda::InitiatorPtr> all = cuda::CopyInitiators::instance().all();
  std::sort(all.begin(), all.end(),
            [](const cuda::InitiatorPtr& a, const cuda::InitiatorPtr& b) { return a->name() < b->name(); });
  return all;
}

cuda::InitiatorPtr initiator_of(const Params& p) {
  cuda::InitiatorPtr initiator = cuda::CopyInitiators::instance().find(p.text("engine"));
  if (!initiator) throw UsageError("gpu.copy_launch: engine=" + p.text("engine") + " is no GPU copy initiator");
  return initiator;
}

class GpuCopyLaunch final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"gpu.copy_launch",
                         Category::ExplicitCopy,
                         "gpu",
                         "small GPU 0 -> GPU 1 copies (copy engine, SM kernel) per launch mode: launch included, back "
                         "to back, CUDA graph",
                         Metric::Latency,
                         RankRange{1, 1},
                         transfer_sizes(8, 64ull << 10),
                         {8, 4096, 64ull << 10}};
  }

  std::optional<std::string> unavailable(const Context&) const override {
    if (auto why = cuda::no_gpu_reason()) return why;
    return cuda::fewer_than_two_gpus();
  }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (const cuda::InitiatorPtr& initiator : initiators())
      for (Mode m : kModes)
        out.push_back(Params{{"engine", initiator->name()}, {"gpus", std::string("0,1")},
                             {"launch_mode", std::string(mode_name(m))}});
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    const Mechanism mechanism = p.has("engine") ? initiator_of(p)->mechanism() : Mechanism::CopyEngine;
    return movement_between(Operation::Copy, MoveDirection::Uni, mechanism,
                            gpu_memory(gpu_of_rank(p, 0), Allocator::Device),
                            gpu_memory(gpu_of_rank(p, 1), Allocator::Device), p, {"launch_mode"});
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<CopyLaunchWorkload>(*initiator_of(params), params, mode_from(params.text("launch_mode")),
                                                gpu_of_rank(params, 0).value_or(0), gpu_of_rank(params, 1).value_or(1),
                                                static_cast<std::size_t>(bytes), ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(GpuCopyLaunch);

}  // namespace
}  // namespace commatlas
