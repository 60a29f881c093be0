// gpu_topology() for engines built without the CUDA backend (topology_cuda.cu is not compiled).
#ifndef COMMATLAS_HAVE_GPU

#include "topology/topology.h"

namespace commatlas {

const Topology& gpu_topology() {
  static const Topology topology = [] {
    Topology t;
    t.source = "cuda_runtime";
    t.nvml_detail = "not queried: built without the CUDA backend";
    t.no_gpu_reason = "built without the CUDA backend";
    return t;
  }();
  return topology;
}

}  // namespace commatlas

#endif
