// As many GPUs as a test wants while it lives, for the variant lists of GPU benchmarks (CUDA
// builds: gpu_count() is overridden; elsewhere the build's own count stands).
#pragma once

#ifdef COMMATLAS_HAVE_CUDA
#include <optional>

#include "backends/cuda/memory.h"
#endif

namespace commatlas::testing {

class FakeGpus {
 public:
  explicit FakeGpus(int n) {
#ifdef COMMATLAS_HAVE_CUDA
    cuda::override_gpu_count_for_tests(n);
#else
    (void)n;
#endif
  }
  ~FakeGpus() {
#ifdef COMMATLAS_HAVE_CUDA
    cuda::override_gpu_count_for_tests(std::nullopt);
#endif
  }
  FakeGpus(const FakeGpus&) = delete;
  FakeGpus& operator=(const FakeGpus&) = delete;
};

}  // namespace commatlas::testing
