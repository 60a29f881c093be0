// Exploration, not part of the engine: which SM-driven peer copy shape gets closest to the NVLink
// peak, next to the copy engine in the same process. Each variant copies BYTES from GPU 0 to GPU 1
// (push: kernel on 0 writes peer memory; pull: kernel on 1 reads peer memory), is timed with events
// over ITERS back-to-back launches after a warm-up, and its output is checked word by word.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 explore_peer_sm.cu -o explore_peer_sm
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "probe_check.h"

constexpr std::size_t kBytes = 1ull << 30;
constexpr int kIters = 20;

// ---- load/store kernels: U 16-byte loads in flight per thread; optional streaming hints.
template <int U, bool kStreaming>
__global__ void ldst_copy(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = kStreaming ? __ldcs(src + i + u * stride) : src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (kStreaming) __stcs(dst + i + u * stride, v[u]);
      else dst[i + u * stride] = v[u];
    }
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// ---- warp-contiguous chunks: each warp moves whole CHUNK-byte pieces (like NCCL's simple protocol).
template <int U>
__global__ void warp_chunk_copy(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  constexpr std::size_t kChunk = 32 * U;  // uint4 per warp per step
  const int lane = threadIdx.x & 31;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  for (std::size_t c = warp * kChunk; c + kChunk <= n; c += warps * kChunk) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[c + u * 32 + lane];
#pragma unroll
    for (int u = 0; u < U; ++u) dst[c + u * 32 + lane] = v[u];
  }
}

// ---- bulk copies through shared memory (TMA, cp.async.bulk): one thread per block drives a ring
// of STAGES chunks; loads complete on an mbarrier, stores are bulk groups.
__device__ inline std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void bulk_copy(char* __restrict__ dst, const char* __restrict__ src, std::size_t bytes, int chunk, int stages) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) std::uint64_t bars[16];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bars[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const std::size_t chunks = bytes / chunk;
  auto load = [&](std::size_t k, int s) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bars[s])), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(ring + static_cast<std::size_t>(s) * chunk)), "l"(src + k * chunk), "r"(chunk),
                 "r"(smem_addr(&bars[s]))
                 : "memory");
  };
  std::size_t k0 = blockIdx.x;
  const std::size_t step = gridDim.x;
  int issued = 0;
  for (int s = 0; s < stages && k0 + s * step < chunks; ++s, ++issued) load(k0 + s * step, s);
  unsigned phase_bits = 0;
  for (int j = 0; j < issued || k0 + j * step < chunks; ++j) {
    const std::size_t k = k0 + j * step;
    if (k >= chunks) break;
    const int s = j % stages;
    const unsigned parity = (phase_bits >> s) & 1u;
    std::uint32_t done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done)
                   : "r"(smem_addr(&bars[s])), "r"(parity)
                   : "memory");
    phase_bits ^= 1u << s;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + k * chunk),
                 "r"(smem_addr(ring + static_cast<std::size_t>(s) * chunk)), "r"(chunk)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // The stage's next load may only land once this store has read it out of shared memory.
    const std::size_t next = k + stages * step;
    if (next < chunks) {
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      load(next, s);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void fill(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x)
    p[i] = static_cast<std::uint32_t>(i * 2654435761u) ^ seed;
}
__global__ void verify(const std::uint32_t* p, std::size_t n, std::uint32_t seed, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x)
    local += p[i] != (static_cast<std::uint32_t>(i * 2654435761u) ^ seed);
  if (local) atomicAdd(bad, local);
}


double time_variant(int run_dev, const std::function<void(cudaStream_t)>& op, cudaStream_t stream) {
  cudaEvent_t a, b;
  CHECK(cudaSetDevice(run_dev));
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w) op(stream);
  CHECK(cudaEventRecord(a, stream));
  for (int i = 0; i < kIters; ++i) op(stream);
  CHECK(cudaEventRecord(b, stream));
  CHECK(cudaEventSynchronize(b));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return static_cast<double>(kBytes) * kIters / (ms * 1e-3) / 1e9;
}

using Op = std::function<void(cudaStream_t, char* dst, const char* src)>;

struct Buffers {
  char* src[2];  // src[g] lives on GPU g
  char* dst[2];  // dst[g] lives on GPU g
  cudaStream_t stream[2];
};

std::uint64_t check(int dev, const char* p, std::uint32_t seed, unsigned long long* bad) {
  CHECK(cudaSetDevice(dev));
  CHECK(cudaMemset(bad, 0, sizeof *bad));
  verify<<<1024, 256>>>(reinterpret_cast<const std::uint32_t*>(p), kBytes / 4, seed, bad);
  unsigned long long h = 0;
  CHECK(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

void prepare(Buffers& b, unsigned long long** bad) {
  for (int g = 0; g < 2; ++g) {
    CHECK(cudaSetDevice(g));
    fill<<<1024, 256>>>(reinterpret_cast<std::uint32_t*>(b.src[g]), kBytes / 4, 0x1234u + g);
    CHECK(cudaMemset(b.dst[g], 0, kBytes));
    CHECK(cudaDeviceSynchronize());
  }
  (void)bad;
}

// side: "push" runs on the source GPU, "pull" on the destination GPU.
void run(const std::string& name, const Op& op, Buffers& b, unsigned long long* bad[2]) {
  for (int push = 1; push >= 0; --push) {
    // uni 0 -> 1
    prepare(b, bad);
    const int dev = push ? 0 : 1;
    const double uni = time_variant(dev, [&](cudaStream_t s) { op(s, b.dst[1], b.src[0]); }, b.stream[dev]);
    const auto bad_uni = check(1, b.dst[1], 0x1234u, bad[1]);
    // bi: 0 -> 1 and 1 -> 0 at once
    prepare(b, bad);
    cudaEvent_t a[2], e[2];
    for (int g = 0; g < 2; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaEventCreate(&a[g]));
      CHECK(cudaEventCreate(&e[g]));
    }
    auto launch_both = [&]() {
      for (int g = 0; g < 2; ++g) {
        const int runner = push ? g : 1 - g;  // g is the source of this direction
        CHECK(cudaSetDevice(runner));
        op(b.stream[runner], b.dst[1 - g], b.src[g]);
      }
    };
    for (int w = 0; w < 3; ++w) launch_both();
    for (int g = 0; g < 2; ++g) { CHECK(cudaSetDevice(g)); CHECK(cudaStreamSynchronize(b.stream[g])); }
    for (int g = 0; g < 2; ++g) { CHECK(cudaSetDevice(g)); CHECK(cudaEventRecord(a[g], b.stream[g])); }
    for (int i = 0; i < kIters; ++i) launch_both();
    float worst = 0;
    for (int g = 0; g < 2; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaEventRecord(e[g], b.stream[g]));
      CHECK(cudaEventSynchronize(e[g]));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a[g], e[g]));
      if (ms > worst) worst = ms;
      CHECK(cudaEventDestroy(a[g]));
      CHECK(cudaEventDestroy(e[g]));
    }
    const double bi = 2.0 * kBytes * kIters / (worst * 1e-3) / 1e9;
    const auto bad_bi = check(1, b.dst[1], 0x1234u, bad[1]) + check(0, b.dst[0], 0x1235u, bad[0]);
    std::printf("%-40s %-4s uni %7.1f GB/s  bi %7.1f GB/s  (%.1f per direction)  bad %llu/%llu\n", name.c_str(),
                push ? "push" : "pull", uni, bi, bi / 2, (unsigned long long)bad_uni, (unsigned long long)bad_bi);
    std::fflush(stdout);
  }
}

// Both GPUs' SMs drive one direction: the source GPU pushes the first fraction of the bytes, the
// destination GPU pulls the rest; bi does the same for 1 -> 0 at the same time on second streams.
struct Piece {
  int dev;
  cudaStream_t stream;
  char* dst;
  const char* src;
  std::size_t bytes;
};

double time_pieces(const std::vector<Piece>& pieces, std::size_t total) {
  std::vector<cudaEvent_t> a(pieces.size()), e(pieces.size());
  auto launch_all = [&]() {
    for (const auto& p : pieces) {
      CHECK(cudaSetDevice(p.dev));
      ldst_copy<4, false><<<132 * 2, 256, 0, p.stream>>>(reinterpret_cast<uint4*>(p.dst), reinterpret_cast<const uint4*>(p.src), p.bytes / 16);
    }
  };
  for (int w = 0; w < 3; ++w) launch_all();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    CHECK(cudaSetDevice(pieces[i].dev));
    CHECK(cudaStreamSynchronize(pieces[i].stream));
    CHECK(cudaEventCreate(&a[i]));
    CHECK(cudaEventCreate(&e[i]));
  }
  for (std::size_t i = 0; i < pieces.size(); ++i) { CHECK(cudaSetDevice(pieces[i].dev)); CHECK(cudaEventRecord(a[i], pieces[i].stream)); }
  for (int it = 0; it < kIters; ++it) launch_all();
  float worst = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    CHECK(cudaSetDevice(pieces[i].dev));
    CHECK(cudaEventRecord(e[i], pieces[i].stream));
    CHECK(cudaEventSynchronize(e[i]));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a[i], e[i]));
    worst = ms > worst ? ms : worst;
  }
  CHECK(cudaGetLastError());
  return static_cast<double>(total) * kIters / (worst * 1e-3) / 1e9;
}

void run_split(double push_fraction, Buffers& b, unsigned long long* bad[2]) {
  cudaStream_t extra[2];
  for (int g = 0; g < 2; ++g) { CHECK(cudaSetDevice(g)); CHECK(cudaStreamCreateWithFlags(&extra[g], cudaStreamNonBlocking)); }
  const std::size_t first = (static_cast<std::size_t>(kBytes * push_fraction) / (1 << 20)) << 20;
  auto direction = [&](int from, int to, cudaStream_t push_stream, cudaStream_t pull_stream) {
    return std::vector<Piece>{{from, push_stream, b.dst[to], b.src[from], first},
                              {to, pull_stream, b.dst[to] + first, b.src[from] + first, kBytes - first}};
  };
  prepare(b, bad);
  const double uni = time_pieces(direction(0, 1, b.stream[0], b.stream[1]), kBytes);
  const auto bad_uni = check(1, b.dst[1], 0x1234u, bad[1]);
  prepare(b, bad);
  auto both = direction(0, 1, b.stream[0], b.stream[1]);
  for (const auto& p : direction(1, 0, extra[1], extra[0])) both.push_back(p);
  const double bi = time_pieces(both, 2 * kBytes);
  const auto bad_bi = check(1, b.dst[1], 0x1234u, bad[1]) + check(0, b.dst[0], 0x1235u, bad[0]);
  std::printf("split push %.2f / pull %.2f, ldst u4 264x256 each   uni %7.1f GB/s  bi %7.1f GB/s  (%.1f per direction)  bad %llu/%llu\n",
              push_fraction, 1 - push_fraction, uni, bi, bi / 2, (unsigned long long)bad_uni, (unsigned long long)bad_bi);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Buffers b{};
  unsigned long long* bad[2];
  for (int g = 0; g < 2; ++g) {
    CHECK(cudaSetDevice(g));
    CHECK(cudaDeviceEnablePeerAccess(1 - g, 0));
    CHECK(cudaMalloc(&b.src[g], kBytes));
    CHECK(cudaMalloc(&b.dst[g], kBytes));
    CHECK(cudaMalloc(&bad[g], sizeof(unsigned long long)));
    CHECK(cudaStreamCreateWithFlags(&b.stream[g], cudaStreamNonBlocking));
    CHECK(cudaFuncSetAttribute(bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  }
  std::printf("SMs %d, %zu MiB per copy, %d timed launches after 3 warm-up\n", sms, kBytes >> 20, kIters);
  auto want = [&](const std::string& n) { return only.empty() || n.find(only) != std::string::npos; };

  if (want("split"))
    for (double f : {0.3, 0.4, 0.5, 0.6, 0.7}) run_split(f, b, bad);
  if (want("ce")) run("ce cudaMemcpyAsync", [](cudaStream_t s, char* d, const char* src) {
      CHECK(cudaMemcpyAsync(d, src, kBytes, cudaMemcpyDefault, s)); }, b, bad);

  const std::size_t n16 = kBytes / 16;
  auto ldst = [&](auto kernel, const char* tag, int blocks, int threads) {
    const std::string name = std::string(tag) + " blocks " + std::to_string(blocks) + " x " + std::to_string(threads);
    if (!want(name)) return;
    run(name, [=](cudaStream_t s, char* d, const char* src) {
      kernel<<<blocks, threads, 0, s>>>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(src), n16); }, b, bad);
  };
  for (int bps : {1, 2, 4, 8}) {
    ldst(ldst_copy<4, false>, "ldst u4", sms * bps, 256);
    ldst(ldst_copy<8, false>, "ldst u8", sms * bps, 256);
    ldst(ldst_copy<4, true>, "ldst u4 cs", sms * bps, 256);
  }
  ldst(ldst_copy<16, false>, "ldst u16", sms, 256);
  ldst(ldst_copy<16, false>, "ldst u16", sms * 2, 256);
  ldst(ldst_copy<8, false>, "ldst u8", sms, 1024);
  ldst(ldst_copy<8, false>, "ldst u8", sms * 2, 512);
  for (int blocks : {16, 32, 64, 96})
    ldst(ldst_copy<8, false>, "ldst u8", blocks, 512);
  ldst(warp_chunk_copy<8>, "warpchunk u8", sms * 2, 512);
  ldst(warp_chunk_copy<16>, "warpchunk u16", sms, 512);
  ldst(warp_chunk_copy<16>, "warpchunk u16", sms * 2, 256);

  for (int chunk : {8192, 16384, 32768}) {
    for (int stages : {2, 4, 8}) {
      if (static_cast<std::size_t>(chunk) * stages > 100 * 1024) continue;
      for (int bps : {1, 2}) {
        const std::string name = "bulk chunk " + std::to_string(chunk) + " stages " + std::to_string(stages) +
                                 " blocks " + std::to_string(sms * bps);
        if (!want(name)) continue;
        const int blocks = sms * bps;
        run(name, [=](cudaStream_t s, char* d, const char* src) {
          bulk_copy<<<blocks, 32, static_cast<std::size_t>(chunk) * stages, s>>>(d, src, kBytes, chunk, stages); }, b, bad);
      }
    }
  }
  for (int blocks : {32, 64}) {
    const std::string name = "bulk chunk 16384 stages 4 blocks " + std::to_string(blocks);
    if (want(name))
      run(name, [=](cudaStream_t s, char* d, const char* src) {
        bulk_copy<<<blocks, 32, 16384 * 4, s>>>(d, src, kBytes, 16384, 4); }, b, bad);
  }
  return 0;
}
