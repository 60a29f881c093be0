// NCCL ping-pong between GPUs 0 and 1 per launch mode (the record's launch_mode), with one MPI rank
// per GPU (nccl.pingpong_launch, suite mpi-gpu) and from one process (nccl.single.pingpong_launch,
// suite nccl):
//   launch_included  one round trip per sample (two NCCL groups), the host waits for it
//   back_to_back     round trips queued behind a start-blocking kernel, CUDA events per sample
//   graph            `ops` round trips captured once per stream into a CUDA graph and replayed,
//                    CUDA events around each replay (as nccl-tests -G)
// Half a round trip in each mode, so the gap between modes is what a launch costs NCCL.
// CUDA only: the HIP build's name map has no graph calls.
#ifndef COMMATLAS_HIP

#include <map>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/launch_timing.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_job.h"
#include "core/all_ranks.h"
#include "core/harness.h"
#include "core/launch_mode.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

constexpr int kOrigin = 0;
constexpr int kPeer = 1;

using Mode = OpLaunch;
constexpr Mode kModes[] = {Mode::LaunchIncluded, Mode::BackToBack, Mode::Graph};

const char* mode_name(Mode m) { return to_string(m); }
Mode mode_from(const std::string& text) { return op_launch_from(text, {Mode::LaunchIncluded, Mode::BackToBack, Mode::Graph}); }

std::uint64_t sender_seed(std::uint64_t run_seed, int rank) { return run_seed * 7919ull + static_cast<std::uint64_t>(rank) + 17; }

struct PairBuffers {
  const nccl::NcclMember* member;
  cuda::GpuBuffer send;
  cuda::GpuBuffer recv;
};

class LaunchWorkload final : public Workload {
 public:
  LaunchWorkload(const nccl::NcclTeam& team, Context& ctx, Mode mode, std::size_t bytes)
      : team_(team), mode_(mode), bytes_(bytes), allocated_(bytes), seed_(ctx.options.seed) {
    buffers_ = make_on_all_ranks(ctx.group, [&] {
      std::vector<std::unique_ptr<PairBuffers>> made;
      for (const auto& m : team_.members()) {
        if (m->rank != kOrigin && m->rank != kPeer) continue;
        made.push_back(std::make_unique<PairBuffers>(
            PairBuffers{m.get(), cuda::GpuBuffer(cuda::MemoryKind::Device, bytes, m->device),
                        cuda::GpuBuffer(cuda::MemoryKind::Device, bytes, m->device)}));
      }
      return made;
    });
    for (const auto& b : buffers_) {
      cuda::DeviceScope scope(b->member->device);
      cuda::fill_pattern_on_device(b->send.data(), bytes_, sender_seed(seed_, b->member->rank),
                                   b->member->stream.get());
    }
    // NCCL connects the pair on its first send/recv: untimed, then poisoned.
    round_trip();
    prepare_batch();
  }

  ~LaunchWorkload() override { drop_graphs(); }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes_);
    const std::string how = nccl::launch_words(team_.launch());
    const std::string trip = "half a round trip of NCCL send/recv between GPUs 0 and 1 (two NCCL groups: 0->1, then "
                             "1->0), " + how;
    cuda::set_launch_sampling(a, mode_);
    switch (mode_) {
      case Mode::Persistent:  // not a mode of this benchmark: mode_from refuses it
        throw UsageError("launch_mode persistent is not measured by this benchmark");
      case Mode::LaunchIncluded:
        a.timing = "host steady_clock around one round trip: both groups enqueued, then the streams synchronized; "
                   "halved; rank 0's clock";
        a.latency_includes = trip + "; launches and the host's wait included";
        break;
      case Mode::BackToBack:
        a.timing = "CUDA events on rank 0's stream around back-to-back round trips queued behind a start-blocking "
                   "kernel (BlockedStart); per-op time halved";
        a.latency_includes = trip + "; launches overlapped with the previous round trip";
        break;
      case Mode::Graph:
        a.timing = "CUDA events on rank 0's stream around one replay per stream of a CUDA graph of `ops` round trips "
                   "(at least 1 ms of them, so a replay outlasts the launch of the next), captured once (as nccl-tests "
                   "-G), launched as it comes (Immediate); per-op time halved";
        a.latency_includes = trip + "; as nodes of a replayed CUDA graph";
        // Each rank replays its own graph and waits for the other's: the replay must outlast a launch.
        a.min_sample_s = cuda::kCoupledGraphMinSampleSeconds;
        break;
    }
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const auto streams = team_.streams();
    const std::size_t first = seconds.size();
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE)
    // One round trip is one call over both streams (two NCCL groups): enqueued with the last.
    // Graph replays are launched as they come: behind a start-blocking kernel the graph launches
    // held the host until that kernel gave up (10 s, every size, on 2x H100), and one replay per
    // sample needs no holding back.
    const std::vector<cudaGraphExec_t>* execs = nullptr;
    cuda::time_launched(
        mode_, streams, samples, ops, seconds,
        [&](std::size_t s) {
          if (s + 1 == streams.size() && move) round_trip();
        },
        [&](std::size_t s) {
          if (!execs) execs = &graphs_of(move ? ops : -ops);
          return (*execs)[s];
        },
        cuda::LaunchMode::Immediate);
    for (std::size_t i = first; i < seconds.size(); ++i) seconds[i] /= 2;
  }

  Verification verify() override {
    std::uint64_t checked = 0;
    for (const auto& b : buffers_) {
      const int from = b->member->rank == kOrigin ? kPeer : kOrigin;
      cuda::DeviceScope scope(b->member->device);
      const std::size_t bad =
          cuda::find_mismatch_on_device(b->recv.data(), bytes_, sender_seed(seed_, from), b->member->stream.get());
      checked += bytes_;
      if (bad != bytes_)
        return {false, checked, "byte " + std::to_string(bad) + " of the " + format_size(bytes_) + " received by NCCL rank " +
                                    std::to_string(b->member->rank) + " differs from what rank " + std::to_string(from) + " sent"};
    }
    return {true, checked, ""};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override {
    if (bytes > allocated_) return false;
    bytes_ = static_cast<std::size_t>(bytes);
    drop_graphs();  // their nodes send the old size
    round_trip();
    prepare_batch();
    return true;
  }

 private:
  void prepare_batch() override {
    for (const auto& m : team_.members()) m->stream.synchronize();
    for (const auto& b : buffers_) {
      cuda::DeviceScope scope(b->member->device);
      cuda::poison_on_device(b->recv.data(), bytes_, b->member->stream.get());
      b->member->stream.synchronize();
    }
  }

  const PairBuffers* buffers_of(const nccl::NcclMember& m) const {
    for (const auto& b : buffers_)
      if (b->member == &m) return b.get();
    return nullptr;
  }

  void transfer(int from, int to) const {
    team_.enqueue_phase([&](const nccl::NcclMember& m) {
      const PairBuffers* b = buffers_of(m);
      if (!b) return;
      if (m.rank == from) COMMATLAS_NCCL(ncclSend(b->send.data(), bytes_, ncclUint8, to, m.comm.get(), m.stream.get()));
      if (m.rank == to) COMMATLAS_NCCL(ncclRecv(b->recv.data(), bytes_, ncclUint8, from, m.comm.get(), m.stream.get()));
    });
  }

  void round_trip() const {
    transfer(kOrigin, kPeer);
    transfer(kPeer, kOrigin);
  }

  // One graph per stream of this process holding |ops| round trips (ops < 0: none, the planted
  // no-op's stand-in), captured together as nccl-tests does (thread-local capture of every stream).
  // Every capture ends before any graph is instantiated: instantiation is not permitted while this
  // thread still captures another stream (one process drives both GPUs), and a capture left open
  // would refuse every later allocation of this thread. The buffers exist before capture begins.
  const std::vector<cudaGraphExec_t>& graphs_of(std::int64_t ops) {
    auto it = graphs_.find(ops);
    if (it != graphs_.end()) return it->second;
    const auto streams = team_.streams();
    std::vector<cudaGraph_t> graphs(streams.size(), nullptr);
    std::size_t begun = 0;
    auto end_captures = [&] {  // ends what was begun; keeps the first error for the caller
      cudaError_t first = cudaSuccess;
      for (std::size_t i = 0; i < begun; ++i) {
        cuda::DeviceScope scope(streams[i]->device());
        const cudaError_t rc = cudaStreamEndCapture(streams[i]->get(), &graphs[i]);
        if (first == cudaSuccess) first = rc;
      }
      begun = 0;
      return first;
    };
    auto destroy_graphs = [&] {
      for (cudaGraph_t& g : graphs)
        if (g) cudaGraphDestroy(g), g = nullptr;
    };
    try {
      for (const cuda::Stream* s : streams) {
        cuda::DeviceScope scope(s->device());
        COMMATLAS_GPU_CHECK(cudaStreamBeginCapture(s->get(), cudaStreamCaptureModeThreadLocal));
        ++begun;
      }
      for (std::int64_t k = 0; k < ops; ++k) round_trip();
    } catch (...) {
      end_captures();
      destroy_graphs();
      throw;
    }
    const cudaError_t ended = end_captures();
    if (ended != cudaSuccess) destroy_graphs();
    COMMATLAS_GPU_CHECK(ended);
    std::vector<cudaGraphExec_t> execs;
    for (std::size_t i = 0; i < streams.size(); ++i) {
      cuda::DeviceScope scope(streams[i]->device());
      cudaGraphExec_t exec = nullptr;
      cudaError_t rc = cudaGraphInstantiate(&exec, graphs[i], 0);
      // Uploaded now, untimed: a first launch that uploads would do it inside the timed batch.
      if (rc == cudaSuccess) rc = cudaGraphUpload(exec, streams[i]->get());
      if (rc == cudaSuccess) rc = cudaStreamSynchronize(streams[i]->get());
      if (rc != cudaSuccess) {
        if (exec) cudaGraphExecDestroy(exec);
        for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
        destroy_graphs();
        COMMATLAS_GPU_CHECK(rc);
      }
      execs.push_back(exec);
    }
    destroy_graphs();
    return graphs_[ops] = std::move(execs);
  }

  void drop_graphs() {
    for (auto& [ops, execs] : graphs_)
      for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
    graphs_.clear();
  }

  const nccl::NcclTeam& team_;
  Mode mode_;
  std::size_t bytes_;
  std::size_t allocated_;
  std::uint64_t seed_;
  std::vector<std::unique_ptr<PairBuffers>> buffers_;
  std::map<std::int64_t, std::vector<cudaGraphExec_t>> graphs_;
};

class NcclPingPongLaunch final : public Benchmark {
 public:
  explicit NcclPingPongLaunch(nccl::NcclLaunch launch) : launch_(launch) {}

  BenchmarkInfo info() const override {
    const std::string prefix = launch_ == nccl::NcclLaunch::RankPerProcess ? "nccl." : "nccl.single.";
    BenchmarkInfo i =
        nccl::nccl_info(prefix + "pingpong_launch", Category::PointToPoint, launch_,
                        "NCCL send/recv ping-pong between GPUs 0 and 1 per launch mode (launch included, back "
                        "to back, CUDA graph), half round trip, " +
                            nccl::launch_words(launch_),
                        Metric::Latency, 2);
    i.default_sizes = transfer_sizes(8, 64ull << 10);
    i.quick_sizes = {8, 4096, 64ull << 10};
    return i;
  }
  std::optional<std::string> unavailable(const Context& ctx) const override {
    return nccl::nccl_unavailable(launch_, ctx, 2);
  }
  std::vector<Params> variants(const Context& ctx) const override {
    std::vector<Params> out;
    for (Mode m : kModes)
      out.push_back(Params{{"launch", to_string(launch_)},
                           {"gpus", nccl::job_devices(launch_, const_cast<Context&>(ctx))},
                           {"direction", std::string("half_round_trip")},
                           {"launch_mode", std::string(mode_name(m))}});
    return out;
  }
  Movement movement(const Context&, const Params& p) const override {
    Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device),
             to = gpu_memory(gpu_of_rank(p, 1), Allocator::Device);
    if (launch_ == nccl::NcclLaunch::RankPerProcess) {
      from.rank = 0;
      to.rank = 1;
    }
    return movement_between(Operation::PingPong, MoveDirection::HalfRoundTrip, Mechanism::Nccl, from, to, p,
                            {"launch", "launch_mode"});
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const nccl::NcclTeam& team = nccl::nccl_team(launch_, ctx);
    if (team.ranks() < 2) throw Skip("NCCL send/recv needs 2 ranks, the job has " + std::to_string(team.ranks()));
    return std::make_unique<LaunchWorkload>(team, ctx, mode_from(params.text("launch_mode")), static_cast<std::size_t>(bytes));
  }

 private:
  nccl::NcclLaunch launch_;
};

COMMATLAS_REGISTER_BENCHMARK(NcclPingPongLaunch, nccl::NcclLaunch::RankPerProcess);
COMMATLAS_REGISTER_BENCHMARK(NcclPingPongLaunch, nccl::NcclLaunch::SingleProcess);

}  // namespace
}  // namespace commatlas

#endif  // COMMATLAS_HIP
