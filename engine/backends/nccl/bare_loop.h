// The bare timing loop of the reference.nccl_* benchmarks: what nccl-tests does, written
// without the harness's calibration or start-blocking kernel, so a run shows whether the
// harness changes the figure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "backends/cuda/memory.h"

namespace commatlas::nccl {

// How an NCCL workload's samples are timed.
enum class NcclTiming {
  Harness,   // time_event_samples: batches the harness calibrates, queued behind a blocking kernel
  BareLoop,  // one event pair around kBareIterations calls enqueued as they come (nccl-tests)
};

// nccl-tests' default iteration count (-n 20).
inline constexpr int kBareIterations = 20;

// One workload's bare loop. Its calls are enqueued while the clock runs, so the GPU can wait on
// the host: where enqueueing one call takes as long as the call itself, the loop times the host's
// launches, not the operation (4 ranks of H100: 12-14 us a call at 8 B, where the harness read
// 6-9). It keeps what the host spent enqueueing, for the record to say so.
class BareLoop {
 public:
  // Per sample: event, kBareIterations x op(), event, synchronise; appends per-op seconds. The
  // harness's `ops` is ignored on purpose: the loop is always the same.
  void time(const cuda::Stream& stream, std::int64_t samples, std::vector<double>& seconds,
            const std::function<void()>& op);
  // Median over the last time()'s samples of the host's seconds per enqueued call (host clock
  // from before the first call to after the last); nullopt before any sample.
  std::optional<double> host_enqueue_s() const;

 private:
  std::vector<double> enqueue_s_;
};

}  // namespace commatlas::nccl
