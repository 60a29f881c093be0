// What `commatlas-engine info` says about the CUDA backend: versions, and devices or why none.
#include "backends/cuda/gpu_runtime.h"
#include "core/backend.h"

namespace commatlas {
namespace {

// 12080 -> "12.8"
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

class CudaProbe : public BackendProbe {
 public:
  std::string name() const override { return "cuda"; }

  void describe(JsonWriter& out) const override {
    int runtime = 0, driver = 0, devices = 0;
    COMMATLAS_GPU_CHECK(cudaRuntimeGetVersion(&runtime));
    out.field("runtime_version", cuda_version_text(runtime));
    // 0 means no driver is installed: not an error, the facts below say so.
    COMMATLAS_GPU_CHECK(cudaDriverGetVersion(&driver));
    out.field("driver_version", driver > 0 ? cuda_version_text(driver) : std::string("none"));
    const cudaError_t rc = cudaGetDeviceCount(&devices);
    out.field("device_count", rc == cudaSuccess ? devices : 0);
    if (rc != cudaSuccess) out.field("reason", gpu_error_text(rc, "cudaGetDeviceCount", __FILE__, __LINE__));
  }
};

}  // namespace
}  // namespace commatlas

COMMATLAS_REGISTER_BACKEND(commatlas::CudaProbe);
