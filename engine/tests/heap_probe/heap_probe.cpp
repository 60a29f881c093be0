// A process of its own for process_state_test.cpp: the heap state under test is what a process's
// history changes, and the test binary's own start-up (static constructors, libraries) has already
// moved it. This program allocates nothing before it measures.
//   commatlas-heap-probe settled|plain [MIB]   prints the page faults of 3 per-call rounds
// Each round is one reduction call of Open MPI 4.1's coll/cuda as the heap sees it: a host copy of
// the send and of the receive buffer, MIB each (16: mpi.gpu_aware.allreduce at 16 MiB; 25: a bucket
// of pattern.bucketed_allreduce.gpu_aware), and the host algorithm's temporary of the same size
// (recursive doubling's), all written, then all freed.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/process_state.h"

namespace {


long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

void per_call_copies(std::size_t block) {
  unsigned char* blocks[3];
  for (auto*& b : blocks) {
    b = static_cast<unsigned char*>(std::malloc(block));
    std::memset(b, 1, block);
    // The blocks are never read: without this, clang (the HIP build's compiler) removes the
    // malloc, memset and free altogether, and the probe measures nothing.
    asm volatile("" : : "r"(b) : "memory");
  }
  for (auto* b : blocks) std::free(b);
}

}  // namespace

int main(int argc, char** argv) {
  const long mib = argc == 3 ? std::atol(argv[2]) : 16;
  if (argc < 2 || argc > 3 || (std::strcmp(argv[1], "settled") != 0 && std::strcmp(argv[1], "plain") != 0) ||
      mib < 1 || mib > 256) {
    std::fprintf(stderr, "usage: commatlas-heap-probe settled|plain [MIB, 1-256]\n");
    return 2;
  }
  const std::size_t block = static_cast<std::size_t>(mib) << 20;
  if (std::strcmp(argv[1], "settled") == 0 && !commatlas::settle_heap().fixed) {
    std::printf("unsettled\n");  // not glibc
    return 0;
  }
  per_call_copies(block);  // the first call may grow the heap
  const long before = minor_faults();
  for (int call = 0; call < 3; ++call) per_call_copies(block);
  std::printf("%ld\n", minor_faults() - before);
  return 0;
}
