#include "backends/cuda/gpu_access.h"

#include <algorithm>
#include <utility>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/gpu_runtime.h"
#include "core/sizes.h"

namespace commatlas::cuda {

// x8 steps: 7 sizes from 4 KiB (launch- and latency-bound) to 1 GiB (at the link's plateau). On 2x H200
// the default GPU suite took 321 s with x4 steps (10 sizes), 75% of it in these size sweeps; the
// suite must finish within 5 minutes on a 4-GPU node. --sizes gives any finer sweep.
// x16 steps from 4 KiB to 256 MiB: launch-bound, L2-resident (64 KiB-16 MiB) and HBM-bound (256 MiB)
// sizes once each; 1 GiB read within 0.1% of 256 MiB on H100 (first default run, atlas-1).
std::vector<std::uint64_t> gpu_bandwidth_sizes() { return transfer_sizes(4096, 256ull << 20); }

// --quick is a smoke test: 16 MiB buffers fill in a fraction of 256 MiB's time (the quick run took 21 s on H100).
std::vector<std::uint64_t> gpu_bandwidth_quick_sizes() { return {64ull << 10, 16ull << 20}; }

BenchmarkInfo gpu_suite_info(std::string key, Category category, std::string description, Metric metric,
                             std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes,
                             std::vector<TierRule> full_tier) {
  return BenchmarkInfo{std::move(key),    category,           "gpu", std::move(description), metric, RankRange{1, 1},
                       std::move(sizes), std::move(quick_sizes), std::move(full_tier)};
}

std::optional<std::string> no_gpu_reason() {
  if (gpu_count() > 0) return std::nullopt;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) cudaGetLastError();  // not sticky: clear it so the next check starts clean
  const std::string why = no_device_reason(rc, count);
  return "no GPU: " + (why.empty() ? std::string("cudaGetDeviceCount found none") : why);
}

std::optional<std::string> fewer_than_two_gpus() {
  if (auto none = no_gpu_reason()) return none;
  return needs_two_gpus(gpu_count());
}

void enable_peer_access(int from, int to) {
  if (from == to) return;
  const int n = gpu_count();
  if (from >= n || to >= n)
    throw Skip("GPU pair " + std::to_string(from) + "->" + std::to_string(to) + " needs " +
               std::to_string(std::max(from, to) + 1) + " GPUs, found " + std::to_string(n));
  int can = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can)
    throw Skip("no peer access from GPU " + std::to_string(from) + " to GPU " + std::to_string(to) +
               " (cudaDeviceCanAccessPeer = 0)");
  DeviceScope scope(from);
  const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // not sticky, but clear it so the next check starts clean
    return;
  }
  COMMATLAS_GPU_CHECK(rc);
}

void require_kernel_access(MemoryKind kind, int gpu) {
  if (kind != MemoryKind::Pageable) return;
  int pageable = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, gpu));
#ifdef COMMATLAS_HIP
  // On AMD a kernel reaches malloc memory only with XNACK on (HSA_XNACK=1, a GPU and kernel that
  // support it, e.g. MI250X, MI300A): the runtime answers 0 otherwise.
  if (!pageable)
    throw Skip("GPU " + std::to_string(gpu) +
               " cannot dereference pageable host memory (hipDeviceAttributePageableMemoryAccess = 0; on AMD it "
               "needs XNACK: HSA_XNACK=1 on a GPU and kernel that support it)");
#else
  if (!pageable)
    throw Skip("GPU " + std::to_string(gpu) +
               " cannot dereference pageable host memory (cudaDevAttrPageableMemoryAccess = 0)");
#endif
}

cudaMemLocation gpu_location(int gpu) {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = gpu;
  return loc;
}

cudaMemLocation host_location() {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeHost;
  loc.id = 0;  // ignored for the host type
  return loc;
}

void advise_host_preferred(const void* ptr, std::size_t bytes, int gpu) {
  COMMATLAS_GPU_CHECK(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, host_location()));
  COMMATLAS_GPU_CHECK(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetAccessedBy, gpu_location(gpu)));
}

}  // namespace commatlas::cuda
