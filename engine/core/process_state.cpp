#include "core/process_state.h"

#include <sys/mman.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace commatlas {
namespace {

HeapState& state() {
  static HeapState s;
  return s;
}

std::size_t page_rounded(std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t rounded = (bytes + page - 1) / page * page;
  return rounded == 0 ? page : rounded;
}

}  // namespace

HeapState settle_heap() {
  HeapState& s = state();
  if (s.fixed) return s;
#if defined(__GLIBC__)
  // Each call also turns glibc's dynamic adjustment off for that threshold.
  const bool ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold)) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimThreshold)) == 1;
  if (ok) {
    s.fixed = true;
    s.mmap_threshold = kHeapMmapThreshold;
    s.trim_threshold = kHeapTrimThreshold;
    s.why = "glibc malloc thresholds fixed at start (mmap 32 MiB, where glibc's dynamic threshold ends up "
            "once a process has freed a 32 MiB block; trim 1 GiB, so a freed block stays with the process "
            "whatever lies above it on the heap): a library's per-call allocations see the same heap whatever "
            "ran before in the job";
  } else {
    s.why = "glibc refused mallopt: its malloc thresholds move with the job's history";
  }
#else
  s.why = "not glibc: the C library's malloc is left as it is";
#endif
  return s;
}

const HeapState& heap_state() { return state(); }

void* map_fresh_pages(std::size_t bytes) {
  void* p = mmap(nullptr, page_rounded(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(void* p, std::size_t bytes) {
  if (p) munmap(p, page_rounded(bytes));
}

}  // namespace commatlas
