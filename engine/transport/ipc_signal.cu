#include "transport/ipc_signal.h"

namespace commatlas {
namespace {

__device__ std::uint64_t global_ns() { return cuda::device_time_ns(); }

__global__ void signal_kernel(std::uint64_t* flag, std::uint64_t value) {
  // Kernel boundaries order the copy before this write; the fence makes that order hold as seen
  // from the other GPU too.
  __threadfence_system();
  *reinterpret_cast<volatile std::uint64_t*>(flag) = value;
}

__global__ void wait_kernel(const std::uint64_t* flag, std::uint64_t value, int* timed_out) {
  const std::uint64_t start = global_ns();
  while (*reinterpret_cast<const volatile std::uint64_t*>(flag) < value) {
    if (global_ns() - start > kSignalTimeoutNs) {
      *reinterpret_cast<volatile int*>(timed_out) = 1;
      return;
    }
  }
  __threadfence_system();
}

}  // namespace

void enqueue_signal(std::uint64_t* flag, std::uint64_t value, cudaStream_t stream) {
  signal_kernel<<<1, 1, 0, stream>>>(flag, value);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

void enqueue_wait(const std::uint64_t* flag, std::uint64_t value, int* timed_out, cudaStream_t stream) {
  wait_kernel<<<1, 1, 0, stream>>>(flag, value, timed_out);
  COMMATLAS_GPU_CHECK_LAUNCH();
}

}  // namespace commatlas
