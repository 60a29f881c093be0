// touch_in_parallel: every byte of the buffer goes to exactly one part, in whole pages, on several
// threads above kParallelTouchFrom where there are CPUs for them, and a part's failure reaches the
// caller.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "backends/host/first_touch.h"

namespace commatlas::host {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

struct Parts {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::set<std::thread::id> threads;
  void add(std::size_t begin, std::size_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  }
};

// The parts, sorted, tile [0, bytes) with no gap and no overlap.
void expect_tiles(std::vector<std::pair<std::size_t, std::size_t>> ranges, std::size_t bytes) {
  std::sort(ranges.begin(), ranges.end());
  std::size_t at = 0;
  for (const auto& [begin, end] : ranges) {
    EXPECT_EQ(begin, at);
    EXPECT_LT(begin, end);
    at = end;
  }
  EXPECT_EQ(at, bytes);
}

TEST(FirstTouch, LargeBufferIsSplitInWholePagesOverSeveralThreads) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only: nothing to split over";
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = kParallelTouchFrom + 3 * page + 123;  // a partial last page too
  Parts parts;
  touch_in_parallel(bytes, cpus, [&](std::size_t b, std::size_t e) { parts.add(b, e); });
  expect_tiles(parts.ranges, bytes);
  EXPECT_EQ(parts.ranges.size(), std::min<std::size_t>(cpus.size(), kMaxTouchThreads));
  EXPECT_EQ(parts.threads.size(), parts.ranges.size());
  EXPECT_EQ(parts.threads.count(std::this_thread::get_id()), 0u);  // the caller only waits
  for (const auto& [begin, end] : parts.ranges) EXPECT_EQ(begin % page, 0u);
}

TEST(FirstTouch, SmallBufferIsOnePartOnOneBoundThread) {
  Parts parts;
  touch_in_parallel(kParallelTouchFrom - 1, allowed_cpus(), [&](std::size_t b, std::size_t e) { parts.add(b, e); });
  ASSERT_EQ(parts.ranges.size(), 1u);
  EXPECT_EQ(parts.ranges[0], std::make_pair(std::size_t{0}, kParallelTouchFrom - 1));
}

TEST(FirstTouch, UnknownCpusLeaveItToTheCallingThread) {
  Parts parts;
  touch_in_parallel(2 * kParallelTouchFrom, {}, [&](std::size_t b, std::size_t e) { parts.add(b, e); });
  ASSERT_EQ(parts.ranges.size(), 1u);
  EXPECT_EQ(parts.threads.count(std::this_thread::get_id()), 1u);
  Parts small;
  touch_from_this_node(1000, [&](std::size_t b, std::size_t e) { small.add(b, e); });
  ASSERT_EQ(small.ranges.size(), 1u);
  EXPECT_EQ(small.threads.count(std::this_thread::get_id()), 1u);  // below the bound: no thread started
}

TEST(FirstTouch, WritesEveryByteOfARealBuffer) {
  std::vector<unsigned char> buffer(kParallelTouchFrom + 4097, 0);
  touch_in_parallel(buffer.size(), allowed_cpus(), [&](std::size_t b, std::size_t e) {
    std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(b), buffer.begin() + static_cast<std::ptrdiff_t>(e), 0x5A);
  });
  EXPECT_EQ(std::count(buffer.begin(), buffer.end(), 0x5A), static_cast<std::ptrdiff_t>(buffer.size()));
}

TEST(FirstTouch, APartsFailureReachesTheCaller) {
  EXPECT_THROW(touch_in_parallel(2 * kParallelTouchFrom, allowed_cpus(),
                                 [](std::size_t b, std::size_t) {
                                   if (b == 0) throw std::runtime_error("cannot write");
                                 }),
               std::runtime_error);
}

}  // namespace
}  // namespace commatlas::host
