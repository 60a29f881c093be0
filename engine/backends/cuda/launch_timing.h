// The clocks of the launch modes (core/launch_mode.h) for an operation the host launches on GPU
// streams: one place decides how each mode is timed, so a copy, an NCCL round trip and a
// GPU-initiated kernel measured "back to back" or "graph" mean the same thing.
//
//   launch_included  host steady_clock around one operation enqueued on every stream and every
//                    stream synchronized: launch, run and the host's wait (one op per sample)
//   back_to_back     CUDA events around `ops` operations per stream queued behind a start-blocking
//                    kernel (time_event_samples' BlockedStart): launch overlapped
//   graph            CUDA events around one replay per stream of a graph of `ops` operations,
//                    captured once before the timed loop (as nccl-tests -G); per-op time
//
// The persistent mode has no launch to time: the caller's kernel keeps its own clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/gpu_runtime.h"
#include "backends/cuda/event_timing.h"
#include "core/harness.h"
#include "core/launch_mode.h"
#include "core/benchmark.h"
#include "core/error.h"

namespace commatlas::cuda {

// A graph replay hides its launch only when it runs longer than the host takes to launch the next
// one (replays are launched as they come). Where one replay waits for another stream's or
// process's replay (the two halves of a ping-pong), the slower launcher's rate shows in the clock:
// on 2x H100 an NCCL ping-pong graph of one round trip read 51 us per round trip in fresh jobs,
// where graphs of 6 read 8.4 us; the event clock's 50 us let a slow first estimate size the graph
// at one round trip, and every later sample confirmed it. Such workloads ask for samples of at least
// 1 ms, twenty such launches. Not every graph does: with 500 copy-engine nodes per replay a copy read
// 1.7 or 2.0-2.4 us from job to job, where 28 per replay read 1.7-1.9.
inline constexpr double kCoupledGraphMinSampleSeconds = 1e-3;

// What the mode asks of the harness's sampling: one operation per sample where the host waits for
// each, samples long enough for the event clock where CUDA events time them.
inline void set_launch_sampling(Accounting& a, OpLaunch mode) {
  if (mode == OpLaunch::LaunchIncluded) a.one_op_per_sample = true;
  if (mode == OpLaunch::BackToBack || mode == OpLaunch::Graph) a.min_sample_s = kEventClockMinSampleSeconds;
}

// Times `samples` samples of `ops` operations in `mode` (not Persistent), appending per-op seconds.
// `enqueue(i)` enqueues one operation on streams[i] (streams[0] carries the clock's events);
// `graph_of(i)` returns the instantiated, uploaded graph of `ops` operations for streams[i]; every
// graph is fetched before the timed loop. `graph_start`: how a sample's replays start
// (time_event_samples' LaunchMode).
template <typename Enqueue, typename GraphOf>
void time_launched(OpLaunch mode, const std::vector<const Stream*>& streams, std::int64_t samples, std::int64_t ops,
                   std::vector<double>& seconds, Enqueue&& enqueue, GraphOf&& graph_of,
                   LaunchMode graph_start = LaunchMode::BlockedStart) {
  switch (mode) {
    case OpLaunch::Persistent:
      throw MeasurementError("launch_mode persistent is timed by the kernel that runs it, not by the host");
    case OpLaunch::LaunchIncluded:
      time_host_samples(samples, ops, seconds, [&] {
        for (std::size_t i = 0; i < streams.size(); ++i) enqueue(i);
        for (const Stream* s : streams) s->synchronize();
      });
      return;
    case OpLaunch::BackToBack:
      time_event_samples(streams, samples, ops, seconds, [&](std::size_t i) { enqueue(i); });
      return;
    case OpLaunch::Graph: {
      std::vector<cudaGraphExec_t> execs;
      for (std::size_t i = 0; i < streams.size(); ++i) execs.push_back(graph_of(i));
      const std::size_t first = seconds.size();
      time_event_samples(
          streams, samples, 1, seconds,
          [&](std::size_t i) { COMMATLAS_GPU_CHECK(cudaGraphLaunch(execs[i], streams[i]->get())); }, graph_start);
      for (std::size_t i = first; i < seconds.size(); ++i) seconds[i] /= static_cast<double>(ops);
      return;
    }
  }
}

}  // namespace commatlas::cuda
