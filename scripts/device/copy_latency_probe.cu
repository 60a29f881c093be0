// Exploration, not part of the engine: what one small synchronous copy costs a fresh process, and on
// which CPU. GPU-aware Open MPI moves a small device message with a synchronous copy on each side
// (device to its shared-memory fragment, fragment to device), so a window of 64 such messages is
// 64 times that cost; on 2x H100 the window took 300 us in some jobs and 570 us in others. If a
// fresh process's plain copy shows the same spread, the state lives below MPI (the CUDA context,
// the copy engine, the CPU the process runs on); if it does not, in the library.
// Prints one JSON line: the CPU it ran on, the GPU, and per direction the median, 10th and 90th
// percentile of the per-copy time over batches of 100 copies of 8 bytes (pinned host memory).
// Build: nvcc -O2 -arch=sm_90 -std=c++17 copy_latency_probe.cu -o copy_latency_probe
// Usage:  copy_latency_probe GPU [BATCHES]
#include <cuda_runtime.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kCopiesPerBatch = 100;

struct Percentiles {
  double p10, median, p90;
};

Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(q * (v.size() - 1))]; };
  return {at(0.1), at(0.5), at(0.9)};
}

// Per-copy microseconds of each batch of kCopiesPerBatch synchronous copies.
std::vector<double> time_batches(void* dst, const void* src, cudaMemcpyKind kind, int batches) {
  std::vector<double> out;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCopiesPerBatch; ++i) CHECK(cudaMemcpy(dst, src, 8, kind));
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    out.push_back(dt.count() / kCopiesPerBatch);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GPU [BATCHES]\n", argv[0]);
    return 2;
  }
  const int gpu = std::atoi(argv[1]);
  const int batches = argc > 2 ? std::atoi(argv[2]) : 50;
  CHECK(cudaSetDevice(gpu));
  void* device = nullptr;
  void* host = nullptr;
  CHECK(cudaMalloc(&device, 8));
  CHECK(cudaMallocHost(&host, 8));
  time_batches(host, device, cudaMemcpyDeviceToHost, 5);  // warm-up: first copies map and set up
  time_batches(device, host, cudaMemcpyHostToDevice, 5);
  const Percentiles d2h = percentiles(time_batches(host, device, cudaMemcpyDeviceToHost, batches));
  const Percentiles h2d = percentiles(time_batches(device, host, cudaMemcpyHostToDevice, batches));
  std::printf("{\"cpu\": %d, \"gpu\": %d, \"d2h_us\": [%.3f, %.3f, %.3f], \"h2d_us\": [%.3f, %.3f, %.3f]}\n",
              sched_getcpu(), gpu, d2h.p10, d2h.median, d2h.p90, h2d.p10, h2d.median, h2d.p90);
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  return 0;
}
