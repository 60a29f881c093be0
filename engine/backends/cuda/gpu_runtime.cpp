#include "backends/cuda/gpu_runtime.h"

namespace commatlas {

std::string gpu_error_text(cudaError_t rc, const char* call, const char* file, int line) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ") at " + file +
         ":" + std::to_string(line);
}

void throw_gpu_error(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so the next point starts clean
    throw Skip("not enough memory: " + gpu_error_text(rc, call, file, line));
  }
  throw MeasurementError(gpu_error_text(rc, call, file, line));
}

}  // namespace commatlas
