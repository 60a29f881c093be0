// The process state the engine fixes at start (core/process_state.h). The heap checks run in a
// small program of their own (tests/heap_probe): the state they test is what a process's history
// changes, and this binary's start-up has already changed it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/process_state.h"

namespace commatlas {
namespace {

// The page faults of 3 per-call rounds of three `mib` MiB blocks in commatlas-heap-probe
// (tests/heap_probe), or -1.
long probe_faults(const char* mode, int mib) {
  const std::string command = std::string(COMMATLAS_HEAP_PROBE) + " " + mode + " " + std::to_string(mib);
  FILE* out = popen(command.c_str(), "r");
  if (!out) return -1;
  char line[64] = {};
  const bool read = std::fgets(line, sizeof line, out) != nullptr;
  if (pclose(out) != 0 || !read) return -1;
  return std::string(line) == "unsettled\n" ? -2 : std::atol(line);
}

// 3 rounds of three blocks: every page of them if every round faults its pages in again.
long round_pages(int mib) { return 3L * 3L * (static_cast<long>(mib) << 20) / 4096; }

// mpi.gpu_aware.allreduce at 16 MiB, and a 25 MiB bucket of pattern.bucketed_allreduce.gpu_aware:
// three blocks of 25 MiB outgrow glibc's own trim pairing (64 MiB).
class HeapProbeTest : public ::testing::TestWithParam<int> {};

TEST_P(HeapProbeTest, UnsettledPerCallBlocksFaultInEveryCall) {
  // Why the engine settles the heap: in a fresh process glibc maps such blocks, or trims the heap
  // after them, and each call pays for its pages again.
  const long faults = probe_faults("plain", GetParam());
  ASSERT_GE(faults, 0);
  EXPECT_GT(faults, round_pages(GetParam()) / 2);
}

TEST_P(HeapProbeTest, ASettledHeapKeepsPerCallBlocksResident) {
  const long faults = probe_faults("settled", GetParam());
  if (faults == -2) GTEST_SKIP() << "not glibc: the engine leaves the C library's malloc as it is";
  ASSERT_GE(faults, 0);
  EXPECT_LT(faults, round_pages(GetParam()) / 50);
}

INSTANTIATE_TEST_SUITE_P(BlockMiB, HeapProbeTest, ::testing::Values(16, 25));

TEST(ProcessStateTest, HeapStateSaysWhy) {
  const HeapState s = settle_heap();
  EXPECT_FALSE(s.why.empty());
  EXPECT_EQ(heap_state().fixed, s.fixed);
}

std::size_t resident_pages(void* p, std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(p, bytes, in_core.data()) != 0) return SIZE_MAX;
  std::size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

TEST(ProcessStateTest, FreshPagesAreUntouchedAfterAnEarlierBufferWasUsed) {
  settle_heap();  // the state in which heap allocations would hand back touched pages
  constexpr std::size_t bytes = std::size_t{4} << 20;
  void* first = map_fresh_pages(bytes);
  ASSERT_NE(first, nullptr);
  std::memset(first, 0x5A, bytes);
  unmap_pages(first, bytes);
  void* second = map_fresh_pages(bytes);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(resident_pages(second, bytes), 0u) << "the buffer's first touch would not be its own";
  EXPECT_EQ(static_cast<unsigned char*>(second)[bytes / 2], 0);
  unmap_pages(second, bytes);
}

}  // namespace
}  // namespace commatlas
