// A GPU compute kernel of a given duration on a stream of its own, so the bucketed allreduce can
// overlap with it. Registered by compute.cu (GPU builds); null otherwise, so the patterns (built
// without CUDA) ask for it at run time.
#pragma once

#include <memory>

#include "core/context.h"

namespace commatlas {

struct GpuCompute {
  virtual ~GpuCompute() = default;
  virtual void start(double microseconds) = 0;  // launches, returns at once
  virtual void wait() = 0;                      // until the kernel is done
};
using GpuComputeMaker = std::unique_ptr<GpuCompute> (*)(Context&);
GpuComputeMaker& gpu_compute_maker();

}  // namespace commatlas
