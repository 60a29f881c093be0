#include "backends/host/worker_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/host/numa.h"

namespace commatlas::host {
namespace {

constexpr std::size_t kCacheLine = 64;

// How a thread waits for work another thread is about to give it:
// - pause-spin first: inside a timed batch operations come back to back, and a spinning worker
//   claims a chunk within a fraction of a microsecond, with no system call and no wake-up;
// - then yield: where threads outnumber free CPUs (a small or shared machine), a pause-spinner
//   holds the CPU its partner needs for a whole time slice (milliseconds); yield hands it over;
// - then, pool threads only, sleep on the condition variable: a pool kept between batches must
//   not take the CPUs that fill and check buffers. On a VM a sleeping vCPU may halt, and the
//   hypervisor can wake it late (tens of microseconds, at times milliseconds). That no longer
//   holds an operation up, since the threads that are awake claim the sleeper's chunks, so the
//   spin window only has to cover the gaps inside a batch, not every gap.
// The windows are times, not round counts: a pause lasts 10 to 150 cycles and a yield from a few
// hundred nanoseconds to microseconds depending on the CPU and the hypervisor.
constexpr auto kPauseFor = std::chrono::microseconds(50);
constexpr auto kSleepAfter = std::chrono::milliseconds(2);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

class Backoff {
 public:
  // One round of waiting; false once the sleep window has passed.
  bool wait() {
    if ((++rounds_ & 63) == 0) elapsed_ = Clock::now() - start_;
    if (elapsed_ < kPauseFor)
      cpu_relax();
    else
      std::this_thread::yield();
    return elapsed_ < kSleepAfter;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
  Clock::duration elapsed_{0};
  unsigned rounds_ = 0;
};

// The claim word: which operation (the generation's low 32 bits), how many chunks it has, and
// the next chunk nobody has claimed yet. Generation and count travel with every claim, so a
// claim that succeeds is a claim on that operation's chunk, whatever the worker read before.
constexpr std::uint64_t claim_word(std::uint64_t generation, std::size_t chunks) {
  return (generation & 0xffffffffu) << 32 | static_cast<std::uint64_t>(chunks) << 16;
}
constexpr std::uint64_t claim_tag(std::uint64_t word) { return word >> 32; }
constexpr std::size_t claim_count(std::uint64_t word) { return static_cast<std::size_t>(word >> 16 & 0xffff); }
constexpr std::size_t claim_next(std::uint64_t word) { return static_cast<std::size_t>(word & 0xffff); }

}  // namespace

ChunkPlan plan_chunks(std::size_t total, int threads, std::size_t min_bytes) {
  ChunkPlan p;
  p.total = total;
  if (total == 0) return p;
  const std::size_t most =
      threads <= 1 ? 1
                   : std::min(static_cast<std::size_t>(threads) * ChunkPlan::kChunksPerThread, WorkerPool::kMaxChunks);
  std::size_t size = std::max({min_bytes, (total + most - 1) / most, std::size_t{1}});
  size = (size + kCacheLine - 1) / kCacheLine * kCacheLine;
  p.size = size;
  p.count = (total + size - 1) / size;
  return p;
}

Chunk ChunkPlan::at(std::size_t k) const {
  const std::size_t begin = std::min(total, size * k);
  return {begin, std::min(size, total - begin)};
}

WorkerPool::WorkerPool(int threads, const std::vector<int>& cpus, ReleaseHook on_release)
    : on_release_(std::move(on_release)) {
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
  generation_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(std::size_t chunks, const ChunkTask& body) {
  if (chunks > kMaxChunks)
    throw std::invalid_argument("worker pool: " + std::to_string(chunks) + " chunks in one operation, at most " +
                                std::to_string(kMaxChunks));
  if (chunks <= 1 || threads_.empty()) {
    for (std::size_t k = 0; k < chunks; ++k) body(k, 0);
    return;
  }
  // Only this thread writes the operation's state, and only once the previous operation's chunks
  // are all done: no worker can still be inside one of them.
  const std::uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
  body_.store(&body, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  claim_.store(claim_word(generation, chunks), std::memory_order_release);
  generation_.store(generation);  // seq_cst: orders against a worker announcing it goes to sleep
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  take_chunks(generation, 0);
  // The chunks left are being copied by threads that are running; never sleep on them.
  Backoff backoff;
  while (done_.load(std::memory_order_acquire) != chunks) backoff.wait();
}

void WorkerPool::take_chunks(std::uint64_t generation, int worker) {
  const std::uint64_t tag = generation & 0xffffffffu;
  std::uint64_t word = claim_.load(std::memory_order_acquire);
  while (true) {
    // Another operation's word (this one ended), no chunk left, or more threads than chunks.
    // (A tag repeats only after 2^32 operations; no worker sleeps through that many.)
    if (claim_tag(word) != tag) return;
    const std::size_t count = claim_count(word);
    if (claim_next(word) >= count || static_cast<std::size_t>(worker) >= count) return;
    if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The claim succeeded, so its operation has a chunk not yet done and the caller has not moved
    // on: body_ is still that operation's.
    (*body_.load(std::memory_order_relaxed))(claim_next(word), worker);
    done_.fetch_add(1, std::memory_order_release);
    word = claim_.load(std::memory_order_acquire);
  }
}

std::uint64_t WorkerPool::wait_for_release(std::uint64_t seen) {
  Backoff backoff;
  do {
    const std::uint64_t g = generation_.load(std::memory_order_acquire);
    if (g != seen) return g;
  } while (backoff.wait());
  // Either run() sees sleepers_ > 0 and notifies under the mutex, or this thread's check under
  // the mutex sees the new generation: the seq_cst pair leaves no lost wake-up.
  sleepers_.fetch_add(1);
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [&] { return generation_.load() != seen; });
  sleepers_.fetch_sub(1);
  return generation_.load();
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
    if (on_release_) on_release_(index);
    take_chunks(seen, index);
  }
}

}  // namespace commatlas::host
