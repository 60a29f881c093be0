// The host suite's building blocks, and the proof that its data checks can fail.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <memory>
#include <vector>

#include "backends/host/host_buffer.h"
#include "copy/memcpy_workload.h"
#include "backends/host/pointer_chain.h"
#include "backends/host/worker_pool.h"
#include "core/error.h"
#include "core/registry.h"

namespace commatlas {
namespace {

Context host_context(const RunOptions& options = {}) {
  static SingleProcessGroup group;
  return Context(options, group, discover_host());
}

TEST(ChunkOf, CoversTheBufferContiguouslyOnCacheLines) {
  for (std::size_t total : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, std::size_t{1} << 20,
                            (std::size_t{1} << 20) + 13}) {
    for (int count : {1, 2, 3, 7, 16}) {
      std::size_t next = 0;
      for (int i = 0; i < count; ++i) {
        const host::Chunk c = host::chunk_of(total, count, i);
        EXPECT_EQ(c.begin, next) << total << "/" << count << "/" << i;
        if (c.length) {
          EXPECT_EQ(c.begin % 64, 0u);
        }
        next = c.begin + c.length;
      }
      EXPECT_EQ(next, total) << total << "/" << count;
    }
  }
}

TEST(ChunksWithBytes, CountsTheChunksThatHoldBytes) {
  for (std::size_t total : {std::size_t{0}, std::size_t{1}, std::size_t{16}, std::size_t{64}, std::size_t{65},
                            std::size_t{1000}, std::size_t{4096}, std::size_t{1} << 20, (std::size_t{1} << 20) + 13}) {
    for (int count : {1, 2, 3, 7, 16, 64}) {
      int with_bytes = 0;
      for (int i = 0; i < count; ++i) with_bytes += host::chunk_of(total, count, i).length > 0;
      EXPECT_EQ(host::chunks_with_bytes(total, count), std::max(with_bytes, 1)) << total << "/" << count;
    }
  }
  EXPECT_EQ(host::chunks_with_bytes(16, 64), 1);  // a 16 B copy waits for no other thread
  EXPECT_EQ(host::chunks_with_bytes(4096, 64), 64);
}

TEST(WorkerPool, RunsEveryIndexOncePerOperation) {
  host::WorkerPool pool(4, {});
  ASSERT_EQ(pool.size(), 4);
  std::atomic<int> hits[4] = {};
  const host::WorkerPool::Task task = [&](int i) { hits[i].fetch_add(1); };
  for (int op = 0; op < 2000; ++op) pool.run(task);
  for (auto& h : hits) EXPECT_EQ(h.load(), 2000);
}

// Parts past `parts` hold no bytes: they are not run, and the operation does not wait for their
// workers (were it to, this test would hang: an idle worker never counts itself done).
TEST(WorkerPool, RunsOnlyTheFirstPartsAsked) {
  host::WorkerPool pool(4, {});
  std::atomic<int> hits[4] = {};
  const host::WorkerPool::Task task = [&](int i) { hits[i].fetch_add(1); };
  for (int op = 0; op < 500; ++op) pool.run(task, 2);
  EXPECT_EQ(hits[0].load(), 500);
  EXPECT_EQ(hits[1].load(), 500);
  EXPECT_EQ(hits[2].load(), 0);
  EXPECT_EQ(hits[3].load(), 0);
  for (int op = 0; op < 500; ++op) pool.run(task, 1);
  EXPECT_EQ(hits[0].load(), 1000);
  EXPECT_EQ(hits[1].load(), 500);
}

// The hand-over fields start a cache line of their own wherever the pool is allocated (the pool
// is aligned to it): a process must not get a one-line or a two-line hand-over by the luck of its
// heap, which read up to 2.6x apart between identical runs on the 2-vCPU VM.
TEST(WorkerPool, StartsOnACacheLineWhereverItIsAllocated) {
  EXPECT_EQ(alignof(host::WorkerPool), host::WorkerPool::kHandoverLine);
  std::vector<std::unique_ptr<char[]>> shifts;  // heap allocations of odd sizes in between
  for (int i = 0; i < 8; ++i) {
    shifts.push_back(std::make_unique<char[]>(static_cast<std::size_t>(8 + 24 * i)));
    const auto pool = std::make_unique<host::WorkerPool>(2, std::vector<int>{});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pool.get()) % host::WorkerPool::kHandoverLine, 0u) << "allocation " << i;
  }
}

// Worker i runs on cpus[i mod n] and nowhere else: an operation over all of a node's CPUs must not
// wait on two workers the scheduler placed on one CPU.
TEST(WorkerPool, PinsEachWorkerToOneCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  ASSERT_FALSE(cpus.empty());
  host::WorkerPool pool(5, cpus);
  std::vector<std::atomic<int>> wrong(5);
  const host::WorkerPool::Task task = [&](int i) {
    if (i == 0) return;  // the caller binds itself (caller_binding)
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    const int want = cpus[static_cast<std::size_t>(i) % cpus.size()];
    if (CPU_COUNT(&mine) != 1 || !CPU_ISSET(want, &mine) || sched_getcpu() != want) wrong[i].fetch_add(1);
  };
  for (int op = 0; op < 50; ++op) pool.run(task);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(wrong[i].load(), 0) << "worker " << i;
  EXPECT_EQ(host::WorkerPool::caller_binding(cpus), std::vector<int>{cpus.front()});
  EXPECT_TRUE(host::WorkerPool::caller_binding({}).empty());
}

TEST(HostBuffer, PageAlignedAndWritable) {
  host::HostBuffer b(10000, std::nullopt);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 4096, 0u);
  EXPECT_EQ(b.size(), 10000u);
  EXPECT_EQ(b.placement(), host::NumaPlacement::None);
  std::memset(b.data(), 1, b.size());
  EXPECT_EQ(b.data()[9999], 1);
}

TEST(HostBuffer, PlacedWhenLibnumaIsUsable) {
  const Context ctx = host_context();
  host::HostBuffer b(1 << 16, ctx.host.numa_nodes.front());
  EXPECT_EQ(b.placement(), host::Libnuma::get().placement());
}

TEST(MemcpyWorkload, CopiesAndChecks) {
  for (int threads : {1, 3}) {
    host::MemcpySetup setup;
    setup.bytes = 100003;  // not a multiple of a cache line: the last chunk is short
    setup.threads = threads;
    host::MemcpyWorkload w(setup);
    EXPECT_FALSE(w.verify().ok) << "a copy that has not happened must fail";
    std::vector<double> seconds;
    w.run(2, 3, seconds);
    EXPECT_EQ(seconds.size(), 2u);
    const Verification v = w.verify();
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_EQ(v.bytes_checked, setup.bytes);
  }
}

// A latency over N threads says how many of them copy at that size: below N x 64 B it is fewer,
// and the copy waits for no other (a 16-byte copy over 32 threads is one thread's memcpy).
TEST(MemcpyWorkload, SaysHowManyOfItsThreadsCopy) {
  host::MemcpySetup setup;
  setup.threads = 4;
  setup.bytes = 4096;
  host::MemcpyWorkload w(setup);
  EXPECT_NE(w.accounting().latency_includes.find("over 4 of the 4 threads"), std::string::npos)
      << w.accounting().latency_includes;
  ASSERT_TRUE(w.resize_for_next_size(16));
  EXPECT_NE(w.accounting().latency_includes.find("over 1 of the 4 threads"), std::string::npos)
      << w.accounting().latency_includes;
  std::vector<double> seconds;
  w.begin_timed_batch();
  w.run(1, 1, seconds);
  EXPECT_TRUE(w.verify().ok);
}

// What the harness does before each timed batch: the warm-up's bytes are gone, so only the batch
// that follows can make the check pass (1 and 3 threads poison through different code).
TEST(MemcpyWorkload, EachTimedBatchStartsFromAPoisonedDestination) {
  for (int threads : {1, 3}) {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{100003}}) {
      host::MemcpySetup setup;
      setup.bytes = bytes;
      setup.threads = threads;
      host::MemcpyWorkload w(setup);
      std::vector<double> seconds;
      w.run(1, 1, seconds);  // warm-up: the destination is right
      ASSERT_TRUE(w.verify().ok);
      w.begin_timed_batch();
      const Verification poisoned = w.verify();
      EXPECT_FALSE(poisoned.ok) << threads << " threads, " << bytes << " B";
      EXPECT_NE(poisoned.detail.find("byte 0 "), std::string::npos) << poisoned.detail;
      w.run(1, 1, seconds);
      EXPECT_TRUE(w.verify().ok);
      EXPECT_EQ(w.verify_method(), VerifyMethod::Bytes);
    }
  }
}

// The deliberately corrupted memcpy: prepared through the registry like a real run, the
// destination damaged after the timed loop; the data check must catch it and say where.
TEST(MemcpyWorkload, CorruptedDestinationFailsVerify) {
  const Benchmark* memcpy_benchmark = Registry::instance().find("host.memcpy");
  ASSERT_NE(memcpy_benchmark, nullptr);
  Context ctx = host_context();
  for (const Params& params : memcpy_benchmark->variants(ctx)) {
    auto workload = memcpy_benchmark->prepare(ctx, params, 1 << 20);
    auto* copy = dynamic_cast<host::MemcpyWorkload*>(workload.get());
    ASSERT_NE(copy, nullptr);
    std::vector<double> seconds;
    copy->run(1, 1, seconds);
    ASSERT_TRUE(copy->verify().ok) << params.describe();
    copy->buffers().destination()[777777] ^= 0x40;
    const Verification v = copy->verify();
    EXPECT_FALSE(v.ok) << params.describe();
    EXPECT_NE(v.detail.find("byte 777777 "), std::string::npos) << v.detail;
    EXPECT_NE(v.detail.find("(1 bytes differ)"), std::string::npos) << v.detail;
  }
}

TEST(HostMemcpy, SkipsWhenMemoryIsShort) {
  const Benchmark* b = Registry::instance().find("host.memcpy");
  RunOptions options;
  SingleProcessGroup group;
  HostFacts small = discover_host();
  small.memory_available = 1 << 20;  // 1 MiB: two 512 KiB buffers would take all of it
  Context ctx(options, group, small);
  EXPECT_THROW(b->prepare(ctx, b->variants(ctx).front(), 512 << 10), Skip);
  EXPECT_NO_THROW(b->prepare(ctx, b->variants(ctx).front(), 128 << 10));
}

TEST(HostMemcpy, VariantsSayHowBuffersArePlaced) {
  const Benchmark* b = Registry::instance().find("host.memcpy");
  const Context ctx = host_context();
  const auto variants = b->variants(ctx);
  ASSERT_FALSE(variants.empty());
  for (const Params& p : variants) {
    const std::string placement = p.text("numa_placement");
    EXPECT_EQ(placement, to_string(host::Libnuma::get().placement()));
    EXPECT_EQ(p.has("src_numa"), placement != "none");
  }
  EXPECT_EQ(variants.front().integer("threads"), 1);
  EXPECT_EQ(variants.back().integer("threads"), ctx.worker_threads() > 1 ? ctx.worker_threads() : 1);
}

TEST(ReferenceHostMemcpy, CopiesAndChecks) {
  const Benchmark* b = Registry::instance().find("reference.host_memcpy");
  ASSERT_NE(b, nullptr);
  Context ctx = host_context();
  auto w = b->prepare(ctx, b->variants(ctx).front(), 65537);
  EXPECT_FALSE(w->verify().ok);
  std::vector<double> seconds;
  w->run(2, 4, seconds);
  EXPECT_EQ(seconds.size(), 2u);
  EXPECT_TRUE(w->verify().ok);
}

TEST(PointerChain, IsOneCycleOverEveryLine) {
  host::PointerChain chain(64 * 1000, std::nullopt, 7);
  ASSERT_EQ(chain.lines(), 1000u);
  std::set<void*> seen;
  void* p = chain.start();
  for (int i = 0; i < 1000; ++i) {
    seen.insert(p);
    p = *static_cast<void**>(p);
  }
  EXPECT_EQ(p, chain.start());
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_TRUE(chain.verify(chain.start(), 0).ok);
  EXPECT_TRUE(chain.verify(chain.start(), 1000).ok);
}

TEST(PointerChain, CursorMustMatchTheStepsTaken) {
  host::PointerChain chain(64 * 100, std::nullopt, 7);
  void* p = chain.start();
  for (int i = 0; i < 250; ++i) p = *static_cast<void**>(p);
  EXPECT_TRUE(chain.verify(p, 250).ok);
  EXPECT_FALSE(chain.verify(p, 251).ok);  // a loop that skipped loads ends elsewhere
  EXPECT_FALSE(chain.verify(chain.start(), 250).ok);
}

TEST(PointerChain, BrokenChainFailsVerify) {
  host::PointerChain chain(64 * 100, std::nullopt, 7);
  // Point line 0's successor back at line 0: a cycle of one that skips 99 lines.
  void* first = *static_cast<void**>(chain.start());
  *static_cast<void**>(first) = chain.start();
  const Verification short_cycle = chain.verify(chain.start(), 0);
  EXPECT_FALSE(short_cycle.ok);
  EXPECT_NE(short_cycle.detail.find("link 2 of 100"), std::string::npos) << short_cycle.detail;

  host::PointerChain outside(64 * 100, std::nullopt, 7);
  static char elsewhere[64];
  *static_cast<void**>(outside.line(std::size_t{5})) = elsewhere;
  EXPECT_FALSE(outside.verify(outside.start(), 0).ok);

  host::PointerChain misaligned(64 * 100, std::nullopt, 7);
  *static_cast<void**>(misaligned.line(std::size_t{5})) = static_cast<char*>(misaligned.line(std::size_t{6})) + 8;
  EXPECT_FALSE(misaligned.verify(misaligned.start(), 0).ok);
}

TEST(PointerChain, TwoLinesSwappedFailVerify) {
  // Every line still visited once, in another order: the chain is not the one that was built (a
  // walk that only counts lines to the start could not tell).
  host::PointerChain chain(64 * 100, std::nullopt, 7);
  void** a = static_cast<void**>(chain.line(std::size_t{10}));
  void** b = static_cast<void**>(*a);
  void** c = static_cast<void**>(*b);
  *a = c;  // a -> c -> b -> (c's old successor): b and c change places
  void* after_c = *c;
  *c = b;
  *b = after_c;
  EXPECT_FALSE(chain.verify(chain.start(), 0).ok);
}

TEST(PointerChain, IsRandomAndRepeatableFromItsSeed) {
  host::PointerChain one(64 * 1000, std::nullopt, 7), same(64 * 1000, std::nullopt, 7), other(64 * 1000, std::nullopt, 8);
  auto walk = [](host::PointerChain& c) {
    std::vector<std::ptrdiff_t> steps;
    char* base = static_cast<char*>(c.start());
    void* p = c.start();
    for (int i = 0; i < 1000; ++i) {
      p = *static_cast<void**>(p);
      steps.push_back((static_cast<char*>(p) - base) / 64);
    }
    return steps;
  };
  const auto a = walk(one);
  EXPECT_EQ(a, walk(same));
  EXPECT_NE(a, walk(other));
  int next_line = 0;  // a prefetcher's dream: line i followed by line i + 1
  for (std::size_t i = 1; i < a.size(); ++i) next_line += a[i] == a[i - 1] + 1;
  EXPECT_LT(next_line, 10);
}

TEST(PointerChain, TooSmallIsSkipped) { EXPECT_THROW(host::PointerChain(100, std::nullopt, 1), Skip); }

TEST(HostPointerChase, RunsAndVerifiesThroughTheRegistry) {
  const Benchmark* b = Registry::instance().find("host.pointer_chase");
  ASSERT_NE(b, nullptr);
  Context ctx = host_context();
  auto w = b->prepare(ctx, b->variants(ctx).front(), 64 * 1024);
  std::vector<double> seconds;
  w->run(3, 1000, seconds);
  w->run(1, 77, seconds);
  EXPECT_EQ(seconds.size(), 4u);
  const Verification v = w->verify();
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(w->accounting().latency_includes, "one dependent 8-byte load, random line order, TLB misses included");
}

}  // namespace
}  // namespace commatlas
