// The one header through which the engine talks to the GPU runtime.
//
// Everything GPU-side includes this instead of <cuda_runtime.h>, and checks every call through
// COMMATLAS_GPU_CHECK. The HIP build (AMD GPUs, COMMATLAS_HIP) is a compile option here, not a
// second source tree: HIP's runtime is CUDA's name for name (hip_names.h maps the spelling), and
// the few device-side differences are the helpers at the end of this file.
#pragma once

#ifdef COMMATLAS_HIP
#include "backends/cuda/hip_names.h"
#else
#include <cuda_runtime.h>
#endif

#include <string>

#include "core/error.h"

namespace commatlas::cuda {

#ifdef COMMATLAS_HIP
inline constexpr const char* kGpuRuntimeName = "HIP";
#else
inline constexpr const char* kGpuRuntimeName = "CUDA";
#endif

// "cudaMemcpy(...) failed: ..." with the call as written in the source; a HIP build names the
// hip* call that really ran.
std::string gpu_error_text(cudaError_t rc, const char* call, const char* file, int line);

// Why the runtime sees no device, in words, from what cudaGetDeviceCount answered ("" when it
// succeeded and counted at least one). Kept with the runtime, not with topology discovery, so that
// the GPU backend can say why it skips without reaching up into topology.
std::string no_device_reason(cudaError_t rc, int count);

// Out-of-memory is not a failure of the benchmark: the point cannot run on this GPU.
[[noreturn]] void throw_gpu_error(cudaError_t rc, const char* call, const char* file, int line);

}  // namespace commatlas::cuda

#define COMMATLAS_GPU_CHECK(call)                                                                                   \
  do {                                                                                                              \
    const cudaError_t commatlas_rc_ = (call);                                                                       \
    if (commatlas_rc_ != cudaSuccess) ::commatlas::cuda::throw_gpu_error(commatlas_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface only through cudaGetLastError.
#define COMMATLAS_GPU_CHECK_LAUNCH() COMMATLAS_GPU_CHECK(cudaGetLastError())

// Device-side differences between the two runtimes, for kernels shared by both.
#if defined(__CUDACC__) || defined(__HIPCC__)
namespace commatlas::cuda {

// A nanosecond wall clock readable from a kernel (watchdogs inside spin kernels).
__device__ inline unsigned long long device_time_ns() {
#ifdef COMMATLAS_HIP
#if defined(__HIP_DEVICE_COMPILE__)
  // s_memrealtime counts a constant 100 MHz clock on gfx90a and gfx94x (CDNA2/3).
  return static_cast<unsigned long long>(__builtin_amdgcn_s_memrealtime()) * 10ull;
#else
  return 0;  // the host pass of a HIP compile never runs device code
#endif
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

// Sum over one warp (NVIDIA: 32 lanes) or wavefront (AMD: 64): lane 0 ends with the total.
template <typename T>
__device__ inline T warp_sum(T value) {
#ifdef COMMATLAS_HIP
  for (int offset = warpSize / 2; offset > 0; offset /= 2) value += __shfl_down(value, offset);
#else
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
#endif
  return value;
}

}  // namespace commatlas::cuda
#endif
