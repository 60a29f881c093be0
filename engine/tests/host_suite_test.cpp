// The host suite's building blocks, and the proof that its data checks can fail.
#include <gtest/gtest.h>

#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/host/host_buffer.h"
#include "backends/host/memcpy_workload.h"
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

// A buffer is cut into whole cache lines of at least the minimum, each byte in exactly one chunk;
// a small buffer is one chunk (one thread), a large one about kChunksPerThread per thread.
TEST(PlanChunks, CoversTheBufferOnceInCacheLineChunksOfAtLeastTheMinimum) {
  for (std::size_t total : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, std::size_t{4096},
                            std::size_t{100003}, std::size_t{1} << 20, (std::size_t{1} << 20) + 13, std::size_t{16} << 20}) {
    for (int threads : {1, 2, 3, 7, 32}) {
      for (std::size_t min_bytes : {std::size_t{0}, std::size_t{4096}, std::size_t{64} << 10}) {
        const host::ChunkPlan plan = host::plan_chunks(total, threads, min_bytes);
        const std::string where = std::to_string(total) + "/" + std::to_string(threads) + "/" + std::to_string(min_bytes);
        ASSERT_GE(plan.count, 1u) << where;
        EXPECT_EQ(plan.size % 64, 0u) << where;
        EXPECT_GE(plan.size, min_bytes) << where;
        EXPECT_LE(plan.count, threads > 1 ? std::size_t{4} * static_cast<std::size_t>(threads) : 1u) << where;
        std::size_t next = 0;
        for (std::size_t k = 0; k < plan.count; ++k) {
          const host::Chunk c = plan.at(k);
          EXPECT_EQ(c.begin, next) << where << " chunk " << k;
          EXPECT_GT(c.length, 0u) << where << " chunk " << k;
          if (k + 1 < plan.count) {
            EXPECT_EQ(c.length, plan.size) << where << " chunk " << k;
          }
          next = c.begin + c.length;
        }
        EXPECT_EQ(next, total) << where;
      }
    }
  }
  // What threads=32 means at the default minimum: 4 KiB is the caller's alone, 1 MiB is 16
  // chunks, 16 MiB is 4 chunks per thread.
  const auto plan = [](std::size_t total) { return host::plan_chunks(total, 32, host::kMemcpyMinChunkBytes); };
  EXPECT_EQ(plan(4096).count, 1u);
  EXPECT_EQ(plan(1 << 20).count, 16u);
  EXPECT_EQ(plan(1 << 20).size, 64u << 10);
  EXPECT_EQ(plan(16 << 20).count, 128u);
  EXPECT_EQ(host::plan_chunks(0, 32, 64).count, 0u);
}

// Every chunk of every operation runs exactly once, before run() returns, on a worker below the
// chunk count; operations of different sizes follow one another.
TEST(WorkerPool, RunsEveryChunkOncePerOperation) {
  host::WorkerPool pool(4, {});
  ASSERT_EQ(pool.size(), 4);
  std::vector<std::atomic<int>> hits(24);
  std::atomic<int> wrong_worker{0};
  for (int op = 0; op < 3000; ++op) {
    const std::size_t chunks = static_cast<std::size_t>(op % 24) + (op % 3 == 0 ? 0 : 1);
    for (auto& h : hits) h.store(0);
    const host::WorkerPool::ChunkTask task = [&](std::size_t k, int worker) {
      hits[k].fetch_add(1);
      if (worker < 0 || worker >= pool.size() || static_cast<std::size_t>(worker) >= chunks) wrong_worker.fetch_add(1);
    };
    pool.run(chunks, task);
    for (std::size_t k = 0; k < hits.size(); ++k) ASSERT_EQ(hits[k].load(), k < chunks ? 1 : 0) << "op " << op << " chunk " << k;
  }
  EXPECT_EQ(wrong_worker.load(), 0);
  EXPECT_THROW(pool.run(host::WorkerPool::kMaxChunks + 1, [](std::size_t, int) {}), std::invalid_argument);
}

// A worker that sees an operation late (the hook holds it between its release and its first claim)
// must never run a chunk of an operation that has ended, nor of a later one under the earlier
// one's task: each operation's task counts its own chunks, and every count stays 1 for good.
TEST(WorkerPool, LateWorkerNeverRunsAChunkOfAnotherOperation) {
  constexpr int kOps = 1500;
  constexpr std::size_t kChunks = 6;
  std::vector<std::array<std::atomic<int>, kChunks>> hits(kOps);
  for (auto& op : hits)
    for (auto& h : op) h.store(0);
  std::atomic<int> late_chunks{0};
  std::atomic<unsigned> round{0};
  // Workers 1 and 2 are late by a varying delay: sometimes in time for their operation, often
  // after it ended and another one began.
  host::WorkerPool pool(4, {}, [&](int worker) {
    if (worker == 1 || worker == 2) std::this_thread::sleep_for(std::chrono::microseconds(round.fetch_add(1) % 7 * 20));
  });
  std::vector<host::WorkerPool::ChunkTask> tasks;
  tasks.reserve(kOps);  // each stays alive: a stale call would count, not crash
  for (int op = 0; op < kOps; ++op) {
    const std::size_t chunks = op % 2 ? kChunks : 3;  // the next operation's word differs in size
    tasks.emplace_back([&, op](std::size_t k, int worker) {
      hits[static_cast<std::size_t>(op)][k].fetch_add(1);
      if (worker == 1 || worker == 2) late_chunks.fetch_add(1);
      if (op % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(30));  // some wait long enough
    });
    pool.run(chunks, tasks.back());
    for (std::size_t k = 0; k < kChunks; ++k)
      ASSERT_EQ(hits[static_cast<std::size_t>(op)][k].load(), k < chunks ? 1 : 0) << "op " << op << " chunk " << k;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // late workers finish waking
  for (int op = 0; op < kOps; ++op)
    for (std::size_t k = 0; k < kChunks; ++k)
      EXPECT_EQ(hits[static_cast<std::size_t>(op)][k].load(), k < (op % 2 ? kChunks : 3) ? 1 : 0)
          << "op " << op << " chunk " << k << ": run after its operation returned";
  EXPECT_GT(late_chunks.load(), 0) << "the late workers never took part: the test proves nothing";
}

// An operation waits for its chunks, not for every worker: with two workers held back, the
// caller and the third worker copy everything, and operations keep completing.
TEST(WorkerPool, DoesNotWaitForAWorkerThatHasNotWoken) {
  std::atomic<bool> let_go{false};
  host::WorkerPool pool(4, {}, [&](int worker) {
    if (worker == 1 || worker == 2) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!let_go.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::atomic<int> by_held{0};
  std::atomic<long> chunks_done{0};
  const host::WorkerPool::ChunkTask task = [&](std::size_t, int worker) {
    if (worker == 1 || worker == 2) by_held.fetch_add(1);
    chunks_done.fetch_add(1);
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (int op = 0; op < 200; ++op) pool.run(8, task);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  let_go.store(true);
  EXPECT_EQ(chunks_done.load(), 200 * 8);
  EXPECT_EQ(by_held.load(), 0);
  EXPECT_LT(seconds, 2.5) << "operations waited for the held workers";
}

// Worker i runs on cpus[i mod n] and nowhere else: an operation over all of a node's CPUs must not
// have two workers the scheduler placed on one CPU.
TEST(WorkerPool, PinsEachWorkerToOneCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  ASSERT_FALSE(cpus.empty());
  host::WorkerPool pool(5, cpus);
  std::vector<std::atomic<int>> wrong(5);
  std::vector<std::atomic<int>> ran(5);
  const host::WorkerPool::ChunkTask task = [&](std::size_t, int i) {
    ran[i].fetch_add(1);
    if (i == 0) {  // the caller binds itself (caller_binding); it lets the pool claim some chunks
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      return;
    }
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    const int want = cpus[static_cast<std::size_t>(i) % cpus.size()];
    if (CPU_COUNT(&mine) != 1 || !CPU_ISSET(want, &mine) || sched_getcpu() != want) wrong[i].fetch_add(1);
  };
  for (int op = 0; op < 200; ++op) pool.run(40, task);
  int pool_chunks = 0;
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(wrong[i].load(), 0) << "worker " << i;
    pool_chunks += ran[i].load();
  }
  EXPECT_GT(pool_chunks, 0) << "no pool thread ran a chunk: nothing was checked";
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
  // One thread; 3 threads in 2 chunks of 64 KiB; 3 threads in 12 small chunks, over many
  // operations, each timed batch starting from a poisoned destination.
  const std::vector<std::pair<int, std::size_t>> cases{{1, 65536}, {3, 65536}, {3, 4096}};
  for (const auto& [threads, min_chunk] : cases) {
    host::MemcpySetup setup;
    setup.bytes = 100003;  // not a multiple of a cache line: the last chunk is short
    setup.threads = threads;
    setup.min_chunk_bytes = min_chunk;
    host::MemcpyWorkload w(setup);
    EXPECT_FALSE(w.verify().ok) << "a copy that has not happened must fail";
    std::vector<double> seconds;
    w.run(2, 3, seconds);
    EXPECT_EQ(seconds.size(), 2u);
    Verification v = w.verify();
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_EQ(v.bytes_checked, setup.bytes);
    for (int batch = 0; batch < 20; ++batch) {
      w.begin_timed_batch();
      w.run(10, 20, seconds);
      v = w.verify();
      ASSERT_TRUE(v.ok) << threads << " threads, " << min_chunk << " B chunks, batch " << batch << ": " << v.detail;
    }
  }
}

// threads=N is a ceiling, and the record says what a point used: a buffer of one chunk is the
// caller's alone, a larger one is shared by at most one thread per chunk.
TEST(MemcpyWorkload, AccountingSaysHowManyThreadsShareACopy) {
  host::MemcpySetup setup;
  setup.bytes = 1 << 20;
  setup.threads = 4;
  host::MemcpyWorkload w(setup);
  Accounting a = w.accounting();
  EXPECT_NE(a.timing.find("up to 4 already-running threads"), std::string::npos) << a.timing;
  EXPECT_NE(a.timing.find("chunks of at least 64 KiB"), std::string::npos) << a.timing;
  EXPECT_NE(a.timing.find("here 16 chunks of 64 KiB, so up to 4 threads"), std::string::npos) << a.timing;
  ASSERT_TRUE(w.resize(4096));
  a = w.accounting();
  EXPECT_NE(a.timing.find("one chunk, copied by the caller alone"), std::string::npos) << a.timing;
  EXPECT_NE(a.latency_includes.find("one libc memcpy call"), std::string::npos) << a.latency_includes;
  std::vector<double> seconds;
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
  EXPECT_NE(short_cycle.detail.find("returns to its start after 2"), std::string::npos) << short_cycle.detail;

  host::PointerChain outside(64 * 100, std::nullopt, 7);
  static char elsewhere[64];
  *static_cast<void**>(outside.line(std::size_t{5})) = elsewhere;
  EXPECT_FALSE(outside.verify(outside.start(), 0).ok);

  host::PointerChain misaligned(64 * 100, std::nullopt, 7);
  *static_cast<void**>(misaligned.line(std::size_t{5})) = static_cast<char*>(misaligned.line(std::size_t{6})) + 8;
  EXPECT_FALSE(misaligned.verify(misaligned.start(), 0).ok);
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
