// The bucketed allreduce's compute kernel: every SM busy for a given time, on a stream of its own.
#include "backends/cuda/gpu_runtime.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/memory.h"
#include "benchmarks/pattern/compute.h"
#include "core/error.h"

namespace commatlas {
namespace {

// Stands for the backward pass: every SM busy until `ns` of GPU time have passed.
__global__ void spin_for(unsigned long long ns) {
  // device_time_ns: %globaltimer on NVIDIA, s_memrealtime on AMD (gpu_runtime.h).
  const unsigned long long start = cuda::device_time_ns();
  while (cuda::device_time_ns() - start < ns) {
  }
}

class SpinCompute final : public GpuCompute {
 public:
  explicit SpinCompute(int device) : device_(device), stream_(device), blocks_(cuda::sm_count(device)) {}
  void start(double microseconds) override {
    cuda::DeviceScope scope(device_);
    spin_for<<<blocks_, 64, 0, stream_.get()>>>(static_cast<unsigned long long>(microseconds * 1e3));
    COMMATLAS_GPU_CHECK_LAUNCH();
  }
  void wait() override { stream_.synchronize(); }

 private:
  int device_;
  cuda::Stream stream_;
  int blocks_;
};

const bool registered = [] {
  gpu_compute_maker() = [](Context& ctx) -> std::unique_ptr<GpuCompute> {
    const int gpus = cuda::gpu_count();
    if (gpus == 0) throw Skip("no GPU visible: the overlap variant needs one for its compute kernel");
    return std::make_unique<SpinCompute>(ctx.group.local_rank() % gpus);
  };
  return true;
}();

}  // namespace
}  // namespace commatlas
