// The one header through which the engine talks to the GPU runtime.
//
// Everything GPU-side includes this instead of <cuda_runtime.h>, and checks every call through
// COMMATLAS_GPU_CHECK, so a HIP build can later be a compile option here (hipMemcpyAsync and
// friends are name-for-name) instead of a second source tree.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"

namespace commatlas {

std::string gpu_error_text(cudaError_t rc, const char* call, const char* file, int line);

// Out-of-memory is not a failure of the benchmark: the point cannot run on this GPU.
[[noreturn]] void throw_gpu_error(cudaError_t rc, const char* call, const char* file, int line);

}  // namespace commatlas

#define COMMATLAS_GPU_CHECK(call)                                               \
  do {                                                                          \
    const cudaError_t commatlas_rc_ = (call);                                   \
    if (commatlas_rc_ != cudaSuccess)                                           \
      ::commatlas::throw_gpu_error(commatlas_rc_, #call, __FILE__, __LINE__);   \
  } while (0)

// After a kernel launch: launch-configuration errors surface only through cudaGetLastError.
#define COMMATLAS_GPU_CHECK_LAUNCH() COMMATLAS_GPU_CHECK(cudaGetLastError())
