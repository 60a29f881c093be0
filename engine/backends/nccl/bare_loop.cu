#include "backends/nccl/bare_loop.h"

#include <algorithm>
#include <chrono>

#include "core/stats.h"

namespace commatlas::nccl {

void BareLoop::time(const cuda::Stream& stream, std::int64_t samples, std::vector<double>& seconds,
                    const std::function<void()>& op) {
  using Clock = std::chrono::steady_clock;
  cuda::Event start(stream.device()), stop(stream.device());
  enqueue_s_.clear();
  for (std::int64_t s = 0; s < samples; ++s) {
    COMMATLAS_GPU_CHECK(cudaEventRecord(start.get(), stream.get()));
    const auto enqueue_start = Clock::now();
    for (int i = 0; i < kBareIterations; ++i) op();
    enqueue_s_.push_back(std::chrono::duration<double>(Clock::now() - enqueue_start).count() / kBareIterations);
    COMMATLAS_GPU_CHECK(cudaEventRecord(stop.get(), stream.get()));
    COMMATLAS_GPU_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    COMMATLAS_GPU_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    seconds.push_back(static_cast<double>(ms) * 1e-3 / kBareIterations);
  }
}

std::optional<double> BareLoop::host_enqueue_s() const {
  if (enqueue_s_.empty()) return std::nullopt;
  std::vector<double> sorted = enqueue_s_;
  std::sort(sorted.begin(), sorted.end());
  return percentile_sorted(sorted, 50);
}

}  // namespace commatlas::nccl
