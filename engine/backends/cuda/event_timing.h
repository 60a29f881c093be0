// The CUDA-event clock for the harness: the GPU counterpart of time_host_samples().
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cuda/memory.h"

namespace commatlas::cuda {

// How the start of a timed batch is arranged.
enum class LaunchMode {
  // Queue everything behind a short kernel that spins until the host has finished enqueueing,
  // so the operations start back-to-back and CPU launch cost is not in the bandwidth.
  BlockedStart,
  // Enqueue and go: each sample includes whatever launch gaps the application would see.
  Immediate,
};

// Accounting::min_sample_s for workloads timed here. Each sample adds two event records and the
// fences of its streams to the GPU's timeline, about 2 us seen on H200 (an 8-byte NCCL allreduce
// timed one per sample read 2 us slower than the same calls 20 to an event pair). Samples of at
// least 50 us spread that over enough operations to stay under 0.5 us each.
inline constexpr double kEventClockMinSampleSeconds = 50e-6;

// Times `samples` samples of `ops` operations. `enqueue(i)` enqueues one operation on
// streams[i]; every stream gets `ops` of them per sample, concurrently (streams[0] is the
// primary: the sample's start and end events are recorded there and the others are fenced to
// it, so a sample ends when the slowest stream does). Appends per-op seconds per sample.
void time_event_samples(const std::vector<const Stream*>& streams, std::int64_t samples, std::int64_t ops,
                        std::vector<double>& seconds, const std::function<void(std::size_t stream)>& enqueue,
                        LaunchMode mode = LaunchMode::BlockedStart);

}  // namespace commatlas::cuda
