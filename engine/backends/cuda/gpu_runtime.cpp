#include "backends/cuda/gpu_runtime.h"

namespace commatlas::cuda {

std::string gpu_error_text(cudaError_t rc, const char* call, const char* file, int line) {
  std::string text = call;
#ifdef COMMATLAS_HIP
  if (text.rfind("cuda", 0) == 0) text.replace(0, 4, "hip");
#endif
  return text + " failed: " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ") at " + file +
         ":" + std::to_string(line);
}

std::string no_device_reason(cudaError_t rc, int count) {
  if (rc != cudaSuccess) {
    const std::string error = gpu_error_text(rc, "cudaGetDeviceCount", __FILE__, __LINE__);
    if (rc == cudaErrorNoDevice) return std::string(kGpuRuntimeName) + ": no device visible (" + error + ")";
    if (rc == cudaErrorInsufficientDriver) return "no NVIDIA driver, or one older than the CUDA runtime (" + error + ")";
    return error;
  }
  if (count == 0) return std::string("the ") + kGpuRuntimeName + " runtime sees no device";
  return "";
}

namespace {

// Errors the CUDA documentation calls sticky: "the process is left in an inconsistent state
// and any further CUDA work will return the same error"; the context cannot be used again.
bool is_sticky(cudaError_t rc) {
  switch (rc) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

}  // namespace

void throw_gpu_error(cudaError_t rc, const char* call, const char* file, int line) {
  // A non-sticky error stays as the runtime's last error until read: clear it, or the next
  // point's first launch check reports this point's failure as its own.
  cudaGetLastError();
  if (rc == cudaErrorMemoryAllocation) throw Skip("not enough memory: " + gpu_error_text(rc, call, file, line));
  // A sticky error would fail every later point (or let one through on a broken context): end
  // the run here with the cause, rather than filling the file with its consequences.
  if (is_sticky(rc))
    throw FatalError("GPU context corrupted, run stopped (the process must restart to use the GPU again): " +
                     gpu_error_text(rc, call, file, line));
  throw MeasurementError(gpu_error_text(rc, call, file, line));
}

}  // namespace commatlas::cuda
