// A persistent pool of threads for multi-threaded host operations.
//
// Threads start once per workload; each operation only releases them (a generation counter they
// spin on) and waits for its parts to be done, so thread start-up is never inside a timed loop.
// The calling thread takes part as worker 0: N threads means the caller plus N-1 pool threads.
//
// An operation waits only for the parts that have work, and not on a worker that has not started:
// part i is worker i's, but once the caller has finished its own part and worker i has still not
// taken part i after WorkerPool::kLateWorker, the caller does it. On VMs whose host deschedules a
// vCPU for whole milliseconds (4x H200, 64 vCPUs, 17-45% steal), a pool that waited for every
// worker made every 64-thread copy take 3-6 ms, at 16 B as at 16 MiB. A part a worker has taken
// is still waited for: nobody can finish it for a thread that is off its CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

// Who does part i of operation g: slot i holds the last operation whose part i someone took, so
// exactly one thread takes it per operation, and a thread that read an older operation before it
// was held up (its vCPU descheduled) cannot take a part the caller already did. Workers touch only
// their own slot (a line of its own) unless the caller takes over, so the common case costs no
// hand-over of a cache line beyond the release and the join.
class PartClaims {
 public:
  explicit PartClaims(int parts);
  // True for the one thread that takes part `part` of operation `generation` (operations count up
  // from 1), while no later operation has been taken there.
  bool take(int part, std::uint64_t generation);

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> taken{0};
  };
  std::unique_ptr<Slot[]> slots_;
};

class WorkerPool {
 public:
  static constexpr std::size_t kHandoverLine = 64;  // the cache line of x86-64 and most Arm cores

  // Must not throw: it runs on pool threads with nobody to catch.
  using Task = std::function<void(int index)>;

  // How long the caller, its own part done, waits for a worker to take its part before doing it
  // itself. A released worker spins, so it starts within a microsecond or two on an idle CPU (a
  // sleeping one within tens, between batches only); a host that takes the vCPU away holds it for
  // milliseconds (a hypervisor's or the guest's own time slice).
  static constexpr std::chrono::microseconds kLateWorker{50};

  // `cpus`: where the threads run (empty: anywhere). Each pool thread is pinned to one of them,
  // worker i to cpus[i mod size] (the caller, worker 0, binds itself: caller_binding()), so an
  // operation over all of a node's CPUs does not wait on two workers the scheduler put on one CPU.
  // `late_after`: kLateWorker, or another wait for tests.
  WorkerPool(int threads, const std::vector<int>& cpus, std::chrono::nanoseconds late_after = kLateWorker);
  // The CPU worker 0 (the caller) is meant to run on: {cpus[0]}, or empty when `cpus` was.
  static std::vector<int> caller_binding(const std::vector<int>& cpus);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }
  // Runs task(i) once for each i in [0, parts) (at most size()): task(0) on the caller, task(i) on
  // worker i, or on the caller where worker i is late (kLateWorker). Returns when all have
  // finished, with how many parts the caller did for late workers. Workers past `parts` are
  // released but not waited for.
  int run(const Task& task, int parts);
  int run(const Task& task) { return run(task, size()); }
  // What run() publishes to the workers, in one word so that a worker reads both at once: the
  // operation's number and how many parts it has.
  static constexpr int kPartBits = 16;

 private:
  void worker_loop(int index, std::vector<int> cpus);
  std::uint64_t wait_for_release(std::uint64_t seen);  // returns the new release_ word

  std::chrono::nanoseconds late_after_;
  PartClaims claims_;
  std::vector<std::thread> threads_;
  // What every operation touches, in one cache line of its own: the caller writes the task and the
  // release, each worker reads both and writes `remaining_` (the parts not yet done). Where the object happened to put
  // the task and the generation on two lines, a 2-thread 16-byte copy on the 2-vCPU VM took
  // 0.14-0.17 us instead of 0.06-0.08 (one more line to move per hand-over), and a process kept
  // whichever it got: two identical runs read up to 2.6x apart.
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
