// How one measured operation is launched: the record's `launch_mode` parameter, in the same words
// for every mechanism measured in several modes (copies, NCCL, GPU-initiated messages), so the
// answers can set them side by side and say what a launch costs.
#pragma once

#include <initializer_list>
#include <string>

namespace commatlas {

enum class OpLaunch {
  LaunchIncluded,  // one operation, the host waits for it
  BackToBack,      // operations queued one after another on a stream
  Graph,           // `ops` operations captured once in a CUDA graph and replayed (nccl-tests -G)
  Persistent,      // one kernel already running does every operation (GPU-initiated messages)
};

const char* to_string(OpLaunch mode);
// The mode named `text`, one of `allowed` (a benchmark measures only some); UsageError otherwise.
OpLaunch op_launch_from(const std::string& text, std::initializer_list<OpLaunch> allowed);

}  // namespace commatlas
