// The 4 KiB managed-memory prefetch GPU -> host reads about 34 us at some times and 44 us at others
// within one process, whatever other managed buffers it holds (prefetch_neighbours.cu). How long
// does each level last? N timed prefetches back to back (each after an untimed one to the GPU);
// printed: quantiles, a histogram in 2 us bins, and the median of every block of 50 in order.
// Build and run: nvcc -arch=sm_90 -O2 -o tl scripts/device/prefetch_timeline.cu && ./tl [N]
// Its output: results/nvidia-h200-x1/prefetch-levels-35 (run before a reformatting that kept every step).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_check.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 3000;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  cudaMemLocation gpu0{}, host{};
  gpu0.type = cudaMemLocationTypeDevice;
  gpu0.id = 0;
  host.type = cudaMemLocationTypeHost;
  char* a = nullptr;
  CHECK(cudaMallocManaged(&a, 4096));
  memset(a, 1, 4096);
  std::vector<double> us;  // in the order they were taken
  for (int i = 0; i < n; i++) {
    CHECK(cudaMemPrefetchAsync(a, 4096, gpu0, 0, stream));  // untimed: the pages start on the GPU
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaMemPrefetchAsync(a, 4096, host, 0, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3);
  }
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  printf("n %d  p5 %.1f  p25 %.1f  median %.1f  p75 %.1f  p95 %.1f us\nhistogram (us: count):", n,
         sorted[n / 20], sorted[n / 4], sorted[n / 2], sorted[3 * n / 4], sorted[19 * n / 20]);
  std::vector<int> bins(100, 0);  // 2 us wide; a bin with under 0.5% of the samples is not printed
  for (double v : us) bins[std::min(99, (int)(v / 2))]++;
  for (int b = 0; b < 100; b++)
    if (bins[b] >= n / 200) printf(" %d:%d", 2 * b, bins[b]);
  printf("\nblock medians of 50:");
  for (int b = 0; b + 50 <= n; b += 50) {
    std::vector<double> block(us.begin() + b, us.begin() + b + 50);
    std::sort(block.begin(), block.end());
    printf(" %.0f", block[25]);
  }
  printf("\n");
  return 0;
}
