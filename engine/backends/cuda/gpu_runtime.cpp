#include "backends/cuda/gpu_runtime.h"

namespace commatlas {

std::string gpu_error_text(cudaError_t rc, const char* call, const char* file, int line) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ") at " + file +
         ":" + std::to_string(line);
}

void throw_gpu_error(cudaError_t rc, const char* call, const char* file, int line) {
  // A non-sticky error stays as the runtime's last error until read: clear it, or the next
  // point's first launch check reports this point's failure as its own.
  cudaGetLastError();
  if (rc == cudaErrorMemoryAllocation) throw Skip("not enough memory: " + gpu_error_text(rc, call, file, line));
  throw MeasurementError(gpu_error_text(rc, call, file, line));
}

}  // namespace commatlas
