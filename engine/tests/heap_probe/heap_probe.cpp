// A process of its own for process_state_test.cpp: the heap state under test is what a process's
// history changes, and the test binary's own start-up (static constructors, libraries) has already
// moved it. This program allocates nothing before it measures.
//   commatlas-heap-probe settled|plain   prints the page faults of 3 per-call rounds
// Each round is one reduction call of Open MPI 4.1's coll/cuda as the heap sees it: a 16 MiB host
// copy of the send and of the receive buffer, and the host algorithm's temporary of the same size
// (recursive doubling's), all written, then all freed.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/process_state.h"

namespace {

constexpr std::size_t kBlock = std::size_t{16} << 20;

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

void per_call_copies() {
  unsigned char* blocks[3];
  for (auto*& b : blocks) {
    b = static_cast<unsigned char*>(std::malloc(kBlock));
    std::memset(b, 1, kBlock);
    // The blocks are never read: without this, clang (the HIP build's compiler) removes the
    // malloc, memset and free altogether, and the probe measures nothing.
    asm volatile("" : : "r"(b) : "memory");
  }
  for (auto* b : blocks) std::free(b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "settled") != 0 && std::strcmp(argv[1], "plain") != 0)) {
    std::fprintf(stderr, "usage: commatlas-heap-probe settled|plain\n");
    return 2;
  }
  if (std::strcmp(argv[1], "settled") == 0 && !commatlas::settle_heap().fixed) {
    std::printf("unsettled\n");  // not glibc
    return 0;
  }
  per_call_copies();  // the first call may grow the heap
  const long before = minor_faults();
  for (int call = 0; call < 3; ++call) per_call_copies();
  std::printf("%ld\n", minor_faults() - before);
  return 0;
}
