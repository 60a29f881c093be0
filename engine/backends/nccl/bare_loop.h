// The bare timing loop of the reference.nccl_* benchmarks: what nccl-tests does, written
// without the harness's calibration or start-blocking kernel, so a run shows whether the
// harness changes the figure.
#pragma once

#include <cstdint>
#include <functional>
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

// Per sample: event, kBareIterations x op(), event, synchronise; appends per-op seconds. The
// harness's `ops` is ignored on purpose: the loop is always the same.
void time_bare_loop(const cuda::Stream& stream, std::int64_t samples, std::vector<double>& seconds,
                    const std::function<void()>& op);

}  // namespace commatlas::nccl
