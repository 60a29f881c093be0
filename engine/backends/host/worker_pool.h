// A persistent pool of threads that share one operation in chunks.
//
// Threads start once per workload; each operation only releases them (a generation counter they
// wait on) and ends when its last chunk is done, so thread start-up is never inside a timed loop.
// The calling thread takes part as worker 0: N threads means the caller plus N-1 pool threads.
//
// Chunks are claimed, not assigned: whoever is ready takes the next one. An operation therefore
// waits only for the chunks in progress, never for a worker that has not woken yet (a descheduled
// thread, a halted vCPU the hypervisor wakes late): the others take its share. Each claim carries
// the operation's generation, so a worker that wakes after its operation ended can never run a
// chunk of the next one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace commatlas::host {

// Part [begin, begin + length) of a buffer.
struct Chunk {
  std::size_t begin = 0;
  std::size_t length = 0;
};

// How a buffer of `total` bytes is cut for up to `threads` threads: chunks of at least
// `min_bytes` (a small copy is done by fewer threads, down to one, rather than cut into slivers
// whose claiming costs more than their copy), else about kChunksPerThread per thread so a thread
// that starts late or runs slow leaves little for the others to wait on. Chunk sizes are whole
// cache lines, so no two threads write one line; only the last chunk may be shorter.
struct ChunkPlan {
  static constexpr int kChunksPerThread = 4;
  std::size_t total = 0;
  std::size_t size = 0;   // bytes per chunk
  std::size_t count = 0;  // chunks (0 only when total is 0)
  Chunk at(std::size_t k) const;
};
ChunkPlan plan_chunks(std::size_t total, int threads, std::size_t min_bytes);

class WorkerPool {
 public:
  // Runs chunk `chunk` of the current operation on worker `worker` (0: the caller). Must not
  // throw: it runs on pool threads with nobody to catch.
  using ChunkTask = std::function<void(std::size_t chunk, int worker)>;
  // Test-only: called on a pool thread when it sees a new operation, before it claims anything,
  // so a test can make one worker late. Must not throw.
  using ReleaseHook = std::function<void(int worker)>;

  // Most chunks one operation may have (they are counted in 16 bits of the claim word).
  static constexpr std::size_t kMaxChunks = 0xffff;

  // `cpus`: where the threads run (empty: anywhere). Each pool thread is pinned to one of them,
  // worker i to cpus[i mod size] (the caller, worker 0, binds itself: caller_binding()), so an
  // operation over all of a node's CPUs does not have two workers the scheduler put on one CPU.
  WorkerPool(int threads, const std::vector<int>& cpus, ReleaseHook on_release = {});
  // The CPU worker 0 (the caller) is meant to run on: {cpus[0]}, or empty when `cpus` was.
  static std::vector<int> caller_binding(const std::vector<int>& cpus);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }
  // Runs body(k, worker) once for every k in [0, chunks), on the caller and on pool threads
  // 1..chunks-1 (at most one thread per chunk), whichever claims k first; returns when every
  // chunk is done. One chunk runs on the caller alone, without releasing anyone. At most
  // kMaxChunks (std::invalid_argument beyond).
  void run(std::size_t chunks, const ChunkTask& body);

 private:
  void worker_loop(int index, std::vector<int> cpus);
  std::uint64_t wait_for_release(std::uint64_t seen);
  // Claims and runs chunks of the operation of `generation` until none is left or that
  // operation has ended.
  void take_chunks(std::uint64_t generation, int worker);

  std::vector<std::thread> threads_;
  ReleaseHook on_release_;
  // One cache line each: the word every claim writes, the count the caller waits on, and the
  // generation idle workers poll do not slow one another.
  // The claim word: generation (low 32 bits) << 32 | chunks << 16 | next unclaimed chunk.
  alignas(64) std::atomic<std::uint64_t> claim_{0};
  alignas(64) std::atomic<std::size_t> done_{0};
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  std::atomic<const ChunkTask*> body_{nullptr};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  // Idle workers spin a while, then sleep here, so a pool kept between batches does not steal
  // the CPUs that fill and check buffers.
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace commatlas::host
