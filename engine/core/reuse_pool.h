// Buffers kept after use for the next request of the same size in the same place, up to a cap.
//
// Page-locked host memory costs most where it is made and unmade: the driver pins every page at
// cudaHostAlloc and unpins at cudaFreeHost. A default run makes and unmakes a dozen 256 MiB ones
// (each pinned variant of the copies, the stream kernels and the chases); on 2x H100 pinning alone
// took 1.6-2.1 s of its preparation (results/nvidia-h100-x2/figures-that-hold-18). What a pinned
// buffer is does not depend on how many workloads used it before: its pages stay locked and
// mapped, and every workload fills its source and poisons its destination before it times
// anything. So a released buffer is kept here, and the next workload that asks for the same bytes
// on the same NUMA node gets it back.
//
// The pool knows nothing of the GPU runtime: `release` unmakes a buffer it does not keep.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>

namespace commatlas {

class ReusePool {
 public:
  // Keeps at most `cap_bytes` in all; `release` frees a buffer the pool lets go of.
  ReusePool(std::size_t cap_bytes, std::function<void(void*)> release);
  ~ReusePool();  // releases every kept buffer
  ReusePool(const ReusePool&) = delete;
  ReusePool& operator=(const ReusePool&) = delete;

  // A kept buffer of exactly `bytes` made on `node`, now the caller's; nullptr when none is kept.
  void* take(std::size_t bytes, int node);
  // The caller is done with it: kept (the oldest kept ones released to make room under the cap),
  // or released at once when it alone is over the cap.
  void give(void* ptr, std::size_t bytes, int node);
  std::size_t kept_bytes() const;

 private:
  struct Kept {
    void* ptr;
    std::size_t bytes;
    int node;
  };
  const std::size_t cap_bytes_;
  const std::function<void(void*)> release_;
  mutable std::mutex mutex_;
  std::list<Kept> kept_;  // oldest first
  std::size_t kept_bytes_ = 0;
};

}  // namespace commatlas
