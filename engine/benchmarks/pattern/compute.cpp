#include "benchmarks/pattern/compute.h"

namespace commatlas {

// Here, not in a CUDA or MPI file: the GPU file sets it, the MPI patterns read it, and either may
// be missing from a build.
GpuComputeMaker& gpu_compute_maker() {
  static GpuComputeMaker maker = nullptr;
  return maker;
}

}  // namespace commatlas
