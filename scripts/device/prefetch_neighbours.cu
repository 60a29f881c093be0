// Does a 4 KiB managed-memory prefetch (GPU -> host, host -> GPU) depend on other managed buffers
// of the process, moved, held on either side or freed? Medians of 40 prefetches each way.
// Build and run: nvcc -arch=sm_90 -O2 -o pf scripts/device/prefetch_neighbours.cu && ./pf
// Its output: results/nvidia-h200-x1/prefetch-levels-35 (run before a reformatting that kept every step).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_check.h"

static cudaStream_t stream;
static cudaEvent_t start, stop;

static cudaMemLocation gpu0() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = 0;
  return l;
}

static cudaMemLocation host() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;
  l.id = 0;
  return l;
}

static void prefetch(void* p, size_t bytes, cudaMemLocation where) {
  CHECK(cudaMemPrefetchAsync(p, bytes, where, 0, stream));
}

// The median, in us, of `reps` timed prefetches of p towards the host (d2h) or the GPU, each after
// an untimed one back, so that every timed one finds its pages on the other side (as gpu.prefetch).
static double median_prefetch_us(void* p, size_t bytes, bool d2h, int reps) {
  std::vector<double> us;
  for (int i = 0; i < reps; i++) {
    prefetch(p, bytes, d2h ? gpu0() : host());
    CHECK(cudaEventRecord(start, stream));
    prefetch(p, bytes, d2h ? host() : gpu0());
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

static void report(const char* what, void* a) {
  const double d2h = median_prefetch_us(a, 4096, true, 40), h2d = median_prefetch_us(a, 4096, false, 40);
  printf("%-58s d2h %6.1f us  h2d %6.1f us\n", what, d2h, h2d);
  fflush(stdout);
}

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  char* a = nullptr;
  CHECK(cudaMallocManaged(&a, 4096));
  memset(a, 1, 4096);
  report("A alone", a);
  report("A alone again", a);

  const size_t sizes[] = {65536, 1 << 20, 16 << 20, 256 << 20};
  for (size_t s : sizes) {  // one neighbour B at a time
    char* b = nullptr;
    CHECK(cudaMallocManaged(&b, s));
    memset(b, 2, s);
    char name[128];
    median_prefetch_us(b, s, true, 10);  // B back and forth, ends on the GPU
    median_prefetch_us(b, s, false, 10);
    snprintf(name, sizeof name, "after %zu KiB B moved, B held on GPU", s >> 10);
    report(name, a);
    prefetch(b, s, host());
    CHECK(cudaStreamSynchronize(stream));
    report("  B moved to host, held", a);
    CHECK(cudaFree(b));
    report("  B freed", a);
  }

  // All four held at once, as the runner holds each size's workload for its confirmation.
  std::vector<char*> held;
  for (size_t s : sizes) {
    char* b = nullptr;
    CHECK(cudaMallocManaged(&b, s));
    memset(b, 2, s);
    median_prefetch_us(b, s, true, 10);  // ends on the host (towards the host last)
    held.push_back(b);
  }
  report("all four held on host", a);
  for (size_t i = 0; i < held.size(); i++) prefetch(held[i], sizes[i], gpu0());
  CHECK(cudaStreamSynchronize(stream));
  report("all four held on GPU", a);
  for (char* b : held) CHECK(cudaFree(b));
  report("all freed", a);
  report("all freed, again", a);
  return 0;
}
