#include "backends/cuda/copy_level.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "backends/cuda/gpu_runtime.h"
#include "core/stats.h"

namespace commatlas::cuda {

namespace {
constexpr std::size_t kBytes = 8;
}

CopyLevel::CopyLevel(int device)
    : device_(device), host_(MemoryKind::Pinned, kBytes, device), device_buffer_(MemoryKind::Device, kBytes, device) {}

double CopyLevel::measure() {
  using Clock = std::chrono::steady_clock;
  DeviceScope scope(device_);
  std::vector<double> per_copy;
  for (int batch = 0; batch <= kBatches; ++batch) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCopies; ++i) {
      COMMATLAS_GPU_CHECK(cudaMemcpy(host_.data(), device_buffer_.data(), kBytes, cudaMemcpyDeviceToHost));
      COMMATLAS_GPU_CHECK(cudaMemcpy(device_buffer_.data(), host_.data(), kBytes, cudaMemcpyHostToDevice));
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / (2.0 * kCopies);
    if (batch > 0) per_copy.push_back(us);  // batch 0 is the untimed one
  }
  std::sort(per_copy.begin(), per_copy.end());
  return percentile_sorted(per_copy, 50);
}

}  // namespace commatlas::cuda
