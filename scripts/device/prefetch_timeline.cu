// The 4 KiB managed-memory prefetch GPU -> host reads about 34 us at some times and 44 us at others
// within one process, whatever other managed buffers it holds (prefetch_neighbours.cu). How long
// does each level last? N timed prefetches back to back (each after an untimed one to the GPU);
// printed: quantiles, a histogram in 2 us bins, and the median of every block of 50 in order.
// Build and run: nvcc -arch=sm_90 -O2 -o tl scripts/device/prefetch_timeline.cu && ./tl [N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 3000;
  cudaStream_t st; cudaEvent_t e0, e1;
  CK(cudaSetDevice(0)); CK(cudaStreamCreate(&st)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  cudaMemLocation gpu{}, host{}; gpu.type = cudaMemLocationTypeDevice; gpu.id = 0; host.type = cudaMemLocationTypeHost;
  char* a; CK(cudaMallocManaged(&a, 4096)); memset(a, 1, 4096);
  std::vector<double> us;
  for (int i = 0; i < n; i++) {
    CK(cudaMemPrefetchAsync(a, 4096, gpu, 0, st));
    CK(cudaEventRecord(e0, st));
    CK(cudaMemPrefetchAsync(a, 4096, host, 0, st));
    CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); us.push_back(ms * 1e3);
  }
  std::vector<double> s = us; std::sort(s.begin(), s.end());
  printf("n %d  p5 %.1f  p25 %.1f  median %.1f  p75 %.1f  p95 %.1f us\nhistogram (us: count):", n, s[n/20], s[n/4],
         s[n/2], s[3*n/4], s[19*n/20]);
  std::vector<int> bins(100, 0);
  for (double v : us) bins[std::min(99, (int)(v / 2))]++;
  for (int b = 0; b < 100; b++) if (bins[b] >= n / 200) printf(" %d:%d", 2 * b, bins[b]);
  printf("\nblock medians of 50:");
  for (int b = 0; b + 50 <= n; b += 50) {
    std::vector<double> blk(us.begin() + b, us.begin() + b + 50); std::sort(blk.begin(), blk.end());
    printf(" %.0f", blk[25]);
  }
  printf("\n");
  return 0;
}
