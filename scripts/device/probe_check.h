// The device scripts' standalone probe programs (not the engine): a failed CUDA call ends the probe
// with the call, its file and line, and the runtime's message.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                      \
  do {                                                                                                \
    cudaError_t check_rc_ = (x);                                                                      \
    if (check_rc_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(check_rc_)); \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)
