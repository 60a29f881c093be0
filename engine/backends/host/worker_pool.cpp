#include "backends/host/worker_pool.h"

#include <algorithm>
#include <stdexcept>

#include "backends/host/numa.h"

namespace commatlas::host {
namespace {

constexpr std::size_t kCacheLine = 64;
// Waiting goes pause-spin, then yield-spin, then sleep. Pure spinning is fastest on an idle
// machine, but when threads outnumber free CPUs a spinner holds the CPU its partner needs for a
// whole time slice (milliseconds); yielding hands it over at once.
constexpr int kPauseSpins = 1 << 10;
constexpr int kSpinsBeforeSleep = 1 << 14;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

inline void backoff(int round) {
  if (round < kPauseSpins)
    cpu_relax();
  else
    std::this_thread::yield();
}

}  // namespace

Chunk chunk_of(std::size_t total, int count, int index) {
  const std::size_t parts = static_cast<std::size_t>(std::max(count, 1));
  std::size_t per = (total + parts - 1) / parts;
  per = (per + kCacheLine - 1) / kCacheLine * kCacheLine;
  const std::size_t begin = std::min(total, per * static_cast<std::size_t>(index));
  return {begin, std::min(per, total - begin)};
}

int chunks_with_bytes(std::size_t total, int count) {
  const int parts = std::max(count, 1);
  if (total == 0) return 1;
  const std::size_t per = chunk_of(total, parts, 0).length;
  return static_cast<int>(std::min<std::size_t>((total + per - 1) / per, static_cast<std::size_t>(parts)));
}

WorkerPool::WorkerPool(int threads, const std::vector<int>& cpus) {
  if (threads >= (1 << kPartBits)) throw std::invalid_argument("a worker pool holds fewer than 65536 threads");
  for (int i = 1; i < threads; ++i) {
    std::vector<int> own;
    if (!cpus.empty()) own.push_back(cpus[static_cast<std::size_t>(i) % cpus.size()]);
    threads_.emplace_back(&WorkerPool::worker_loop, this, i, own);
  }
}

std::vector<int> WorkerPool::caller_binding(const std::vector<int>& cpus) {
  return cpus.empty() ? std::vector<int>{} : std::vector<int>{cpus.front()};
}

WorkerPool::~WorkerPool() {
  stopping_.store(true);
  release_.fetch_add(std::uint64_t{1} << kPartBits);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(const Task& task, int parts) {
  parts = std::clamp(parts, 1, size());
  task_ = &task;
  remaining_.store(parts - 1, std::memory_order_relaxed);
  const std::uint64_t generation = (release_.load(std::memory_order_relaxed) >> kPartBits) + 1;
  // seq_cst: orders against a worker announcing it goes to sleep
  release_.store(generation << kPartBits | static_cast<std::uint64_t>(parts));
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  task(0);
  for (int round = 0; remaining_.load(std::memory_order_acquire) != 0; ++round) backoff(round);
}

std::uint64_t WorkerPool::wait_for_release(std::uint64_t seen) {
  for (int round = 0; round < kSpinsBeforeSleep; ++round) {
    const std::uint64_t g = release_.load(std::memory_order_acquire);
    if (g != seen) return g;
    backoff(round);
  }
  // Either run() sees sleepers_ > 0 and notifies under the mutex, or this thread's check under
  // the mutex sees the new generation: the seq_cst pair leaves no lost wake-up.
  sleepers_.fetch_add(1);
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [&] { return release_.load() != seen; });
  sleepers_.fetch_sub(1);
  return release_.load();
}

void WorkerPool::worker_loop(int index, std::vector<int> cpus) {
  try {
    bind_this_thread(cpus);
  } catch (const std::exception&) {
    // Left unbound: the record's placement reflects the buffers, which libnuma still binds.
  }
  std::uint64_t seen = 0;
  while (true) {
    seen = wait_for_release(seen);
    if (stopping_.load()) return;
    // Nothing to do past the operation's parts (the release word says how many there are).
    if (index >= static_cast<int>(seen & ((std::uint64_t{1} << kPartBits) - 1))) continue;
    (*task_)(index);
    remaining_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace commatlas::host
