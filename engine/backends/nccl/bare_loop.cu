#include "backends/nccl/bare_loop.h"

namespace commatlas::nccl {

void time_bare_loop(const cuda::Stream& stream, std::int64_t samples, std::vector<double>& seconds,
                    const std::function<void()>& op) {
  cuda::Event start(stream.device()), stop(stream.device());
  for (std::int64_t s = 0; s < samples; ++s) {
    COMMATLAS_GPU_CHECK(cudaEventRecord(start.get(), stream.get()));
    for (int i = 0; i < kBareIterations; ++i) op();
    COMMATLAS_GPU_CHECK(cudaEventRecord(stop.get(), stream.get()));
    COMMATLAS_GPU_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    COMMATLAS_GPU_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    seconds.push_back(static_cast<double>(ms) * 1e-3 / kBareIterations);
  }
}

}  // namespace commatlas::nccl
