// reference.host_memcpy: the bare-C way to time an N-thread memcpy, kept next to host.memcpy so a
// run shows what the harness and the worker pool cost. One operation is the same as host.memcpy's:
// N plain std::threads (the caller is thread 0) each copy their chunk, and the operation ends when
// the last one has (a spin barrier). One pair of clock reads surrounds each sample's repeated loop.
// The team starts once per batch of samples, outside every clock pair: started per sample, 16
// threads' start-up was the sample (3.9 GB/s against host.memcpy's 190 at 1 MiB on an H100 host).
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "backends/host/copy_buffers.h"
#include "backends/host/host_context.h"
#include "backends/host/worker_pool.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

// The plainest barrier: a count of arrivals and a phase the last arrival advances. Waiters wait
// as the worker pool's threads do (host::backoff), so the two differ in structure, not in patience.
class SpinBarrier {
 public:
  explicit SpinBarrier(int parties) : parties_(parties) {}
  void arrive_and_wait() {
    const std::uint64_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == parties_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      return;
    }
    for (int round = 0; phase_.load(std::memory_order_acquire) == phase; ++round) host::backoff(round);
  }

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint64_t> phase_{0};
};

class BareThreadsMemcpy final : public Workload {
 public:
  BareThreadsMemcpy(std::size_t bytes, int threads, std::uint64_t seed)
      : threads_(threads), buffers_(bytes, std::nullopt, std::nullopt, seed) {}

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(buffers_.size());
    a.timing = "one steady_clock pair around each sample's repeated loop: " + std::to_string(threads_) +
               " std::threads (started before the batch's first clock read) copy their chunk and meet at a spin "
               "barrier per repetition; sample = loop time / repetitions";
    a.latency_includes = "one memcpy of the whole buffer split over the threads, amortised over the repeated loop";
    return a;
  }

  void run(std::int64_t samples, std::int64_t repetitions, std::vector<double>& seconds) override {
    using Clock = std::chrono::steady_clock;
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE
    SpinBarrier all_done(threads_);
    // Every thread, the caller too: per sample one barrier to start together, then per
    // repetition its chunk and a barrier (the operation is over when the last chunk is).
    auto loop = [&](int t, bool timer) {
      const host::Chunk c = host::chunk_of(buffers_.size(), threads_, t);
      unsigned char* dst = buffers_.destination() + c.begin;
      const unsigned char* src = buffers_.source() + c.begin;
      for (std::int64_t s = 0; s < samples; ++s) {
        const auto t0 = timer ? Clock::now() : Clock::time_point{};
        all_done.arrive_and_wait();
        for (std::int64_t r = 0; r < repetitions; ++r) {
          if (move) std::memcpy(dst, src, c.length);
          asm volatile("" ::: "memory");  // keep repeated copies from being merged
          all_done.arrive_and_wait();
        }
        if (timer)
          seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(repetitions));
      }
    };
    std::vector<std::thread> team;
    for (int t = 1; t < threads_; ++t) team.emplace_back(loop, t, false);
    loop(0, true);
    for (auto& t : team) t.join();
  }

  Verification verify() override { return buffers_.verify(); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { buffers_.poison(); }

  int threads_;
  host::CopyBuffers buffers_;
};

class HostMemcpyReference final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"reference.host_memcpy", Category::Reference, Interface::Harness, "host",
                    "bare std::thread memcpy loop, one clock pair: the yardstick for host.memcpy with N threads",
                    Metric::Bandwidth, RankRange{1, 0}, {}, {}};
    // A few of host.memcpy's sizes: enough to see the harness agree with a bare loop.
    i.default_sizes = {4096, 1ull << 20, 64ull << 20};
    i.quick_sizes = {1ull << 20};
    return i;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    return {Params{{"threads", std::int64_t{ctx.worker_threads()}}, {"numa_placement", std::string("none")}}};
  }

  Movement movement(const Context&, const Params& p) const override {
    Movement m = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                                  host_memory(std::nullopt, "pageable"), host_memory(std::nullopt, "pageable"), p,
                                  {"threads"});
    m.cache_working_set_per_byte = 2;
    m.reference_of = "host.memcpy";
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    host::require_host_memory(ctx, 2 * bytes);
    return std::make_unique<BareThreadsMemcpy>(bytes, static_cast<int>(params.integer("threads")), ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(HostMemcpyReference);

}  // namespace
}  // namespace commatlas
