// What `commatlas-engine info` says about the GPU backend (CUDA, or HIP in an AMD build): versions,
// and devices or why none.
#include "backends/cuda/gpu_runtime.h"
#include "core/backend.h"

namespace commatlas::cuda {
namespace {

#ifdef COMMATLAS_HIP
// HIP encodes major * 10^7 + minor * 10^5 + patch: 50221153 -> "5.2.21153"
std::string version_text(int version) {
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100) + "." +
         std::to_string(version % 100000);
}
constexpr const char* kBackendName = "hip";
#else
// 12080 -> "12.8"
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}
constexpr const char* kBackendName = "cuda";
#endif

class GpuProbe : public BackendProbe {
 public:
  std::string name() const override { return kBackendName; }

  void describe(JsonWriter& out) const override {
#ifdef COMMATLAS_HIP
    // Say it where people look: nothing of this build has run on an AMD GPU yet.
    out.field("hardware_tested", false);
    out.field("note", std::string("AMD build: compile-checked and unit-tested in CI (gfx90a, gfx940), not yet run on "
                                  "AMD hardware; RCCL and ROCm-aware MPI paths are not compile-checked"));
#endif
    int runtime = 0, driver = 0, devices = 0;
    COMMATLAS_GPU_CHECK(cudaRuntimeGetVersion(&runtime));
    out.field("runtime_version", version_text(runtime));
    // 0 means no driver is installed: not an error, the facts below say so.
    COMMATLAS_GPU_CHECK(cudaDriverGetVersion(&driver));
    out.field("driver_version", driver > 0 ? version_text(driver) : std::string("none"));
    const cudaError_t rc = cudaGetDeviceCount(&devices);
    out.field("device_count", rc == cudaSuccess ? devices : 0);
    if (rc != cudaSuccess) out.field("reason", gpu_error_text(rc, "cudaGetDeviceCount", __FILE__, __LINE__));
  }

  // Counting the devices initialises the driver (cuInit) and creates no context. Without a device
  // or a driver there is nothing to hold, and that is no error here: the runs say why.
  void start_driver() const override {
    int devices = 0;
    (void)cudaGetDeviceCount(&devices);
  }
};

}  // namespace
}  // namespace commatlas::cuda

COMMATLAS_REGISTER_BACKEND(commatlas::cuda::GpuProbe);
