// A persistent pool of threads for multi-threaded host operations.
//
// Threads start once per workload; each operation only releases them (a word they spin on) and
// waits for its parts to be done, so thread start-up is never inside a timed loop.
// The calling thread takes part as worker 0: N threads means the caller plus N-1 pool threads.
//
// An operation waits only for the workers whose part holds bytes: a 16-byte copy "over 32 threads"
// is one thread's memcpy. Waiting for 31 idle workers to see the release made it 6.4-7.7 us on 2x
// H200 (0.28-0.37 us without), and up to 3.7 ms while another process held one of their CPUs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace commatlas::host {

// Worker `index` of `count` handles [begin, begin + length) of a buffer of `total` bytes. Chunks
// are contiguous and start on 64-byte boundaries, so no two threads write one cache line.
struct Chunk {
  std::size_t begin = 0;
  std::size_t length = 0;
};
Chunk chunk_of(std::size_t total, int count, int index);
// How many of chunk_of's `count` chunks hold bytes (they are a prefix): an operation of fewer bytes
// than count cache lines runs on that many threads, and waits for no other.
int chunks_with_bytes(std::size_t total, int count);

class WorkerPool {
 public:
  static constexpr std::size_t kHandoverLine = 64;  // the cache line of x86-64 and most Arm cores

  // Must not throw: it runs on pool threads with nobody to catch.
  using Task = std::function<void(int index)>;

  // `cpus`: where the threads run (empty: anywhere). Each pool thread is pinned to one of them,
  // worker i to cpus[i mod size] (the caller, worker 0, binds itself: caller_binding()), so an
  // operation over all of a node's CPUs does not wait on two workers the scheduler put on one CPU.
  WorkerPool(int threads, const std::vector<int>& cpus);
  // The CPU worker 0 (the caller) is meant to run on: {cpus[0]}, or empty when `cpus` was.
  static std::vector<int> caller_binding(const std::vector<int>& cpus);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }
  // Runs task(i) once for each i in [0, parts) (at most size()): task(0) on the caller, task(i) on
  // worker i; returns when those have finished. Workers past `parts` see the release and go back
  // to waiting: nothing waits for them.
  void run(const Task& task, int parts);
  void run(const Task& task) { run(task, size()); }
  // What run() publishes to the workers, in one word so that a worker reads both at once: the
  // operation's number and how many parts it has.
  static constexpr int kPartBits = 16;

 private:
  void worker_loop(int index, std::vector<int> cpus);
  std::uint64_t wait_for_release(std::uint64_t seen);  // returns the new release_ word

  std::vector<std::thread> threads_;
  // What every operation touches, in one cache line of its own: the caller writes the task and the
  // release, each worker reads both and writes `remaining_` (the parts not yet done). Where the
  // object happened to put the task and the release on two lines, a 2-thread 16-byte copy on the
  // 2-vCPU VM took 0.14-0.17 us instead of 0.06-0.08 (one more line to move per hand-over), and a
  // process kept whichever it got: two identical runs read up to 2.6x apart.
  alignas(kHandoverLine) const Task* task_ = nullptr;
  std::atomic<std::uint64_t> release_{0};  // generation << kPartBits | parts
  std::atomic<int> remaining_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  // Idle workers spin a little, then sleep here, so a pool kept between samples does not steal
  // the CPU from filling and checking buffers.
  alignas(kHandoverLine) std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace commatlas::host
