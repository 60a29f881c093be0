#pragma once
// The process state every measurement starts from, set once when the engine starts, before MPI or
// any GPU library is loaded. A figure must read the same whatever ran before it in the job, so
// state that a process builds up by its history is fixed here instead of being left to the order
// of the benchmarks.
#include <cstddef>
#include <string>

namespace commatlas {

// glibc's malloc moves two thresholds as a process frees large blocks: after the free of an
// mmapped block of up to 32 MiB, blocks that size come from the heap, and the heap is trimmed back
// to the kernel only above twice that. So a library that allocates per call meets a different
// allocator depending on what ran before it. Open MPI 4.1's coll/cuda mallocs a host copy of the
// send and receive buffers on every reduction (and the host algorithm a temporary): in a fresh
// process three 16 MiB blocks per call trim the heap on every free and fault all 12288 pages in
// again on the next call (tests/heap_probe). On 2x H100 mpi.gpu_aware.allreduce at 16 MiB read
// 0.34-0.36 GB/s in a fresh job, 0.44 after the full run's host MPI benchmarks, and 1.06-1.32 GB/s
// with the thresholds fixed (results/nvidia-h100-x2/figures-that-hold-4/gpu-aware-cause). The
// engine fixes the mmap threshold where glibc itself ends up in a process that has handled large
// blocks (its ceiling, 32 MiB): larger blocks are mapped and faulted in on every call, in every job.
// The trim threshold is set far above what a call holds at once. At glibc's own pairing (twice the
// mmap threshold, 64 MiB) three 25 MiB blocks (pattern.bucketed_allreduce.gpu_aware's buckets at
// 32 MiB) still trimmed the heap on every free when nothing lay above them: 19168 pages faulted in
// again per call (tests/heap_probe), and on 2x H100 the pattern read 77-81 ms in each of 5 fresh
// jobs alone and 24-77 ms in full runs, by what the run's earlier benchmarks left on the heap
// (results/nvidia-h100-x2/figures-that-hold-6/order-check-states). A freed block under the mmap
// threshold now stays with the process, whatever lies above it.
inline constexpr std::size_t kHeapMmapThreshold = std::size_t{32} << 20;  // glibc's own ceiling
inline constexpr std::size_t kHeapTrimThreshold = std::size_t{1} << 30;   // kept: 1 GiB of freed heap

struct HeapState {
  bool fixed = false;            // false: not glibc, or mallopt refused (why says which)
  std::size_t mmap_threshold = 0;
  std::size_t trim_threshold = 0;
  std::string why;               // a sentence for the record
};

// Fixes the thresholds (mallopt) and says what it did. Idempotent; call before any library that
// allocates.
HeapState settle_heap();

// What settle_heap() did in this process (a default HeapState before it ran).
const HeapState& heap_state();

// Page-aligned memory that no earlier buffer of this process has touched: mapped fresh from the
// kernel, so a buffer's first touch (where its pages land, who faults them in) is the benchmark's,
// whatever the heap holds. Returns nullptr when the kernel refuses. Sizes are rounded up to pages.
void* map_fresh_pages(std::size_t bytes);
void unmap_pages(void* p, std::size_t bytes);

}  // namespace commatlas
