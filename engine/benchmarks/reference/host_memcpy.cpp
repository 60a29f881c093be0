// reference.host_memcpy: the bare-C way to time an N-thread memcpy, kept next to host.memcpy so a
// run shows what the harness and the worker pool cost: N plain std::threads each loop memcpy
// over their chunk, and one pair of clock reads surrounds the whole repeated loop.
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

class BareThreadsMemcpy final : public Workload {
 public:
  BareThreadsMemcpy(std::size_t bytes, int threads, std::uint64_t seed)
      : threads_(threads), buffers_(bytes, std::nullopt, std::nullopt, seed) {}

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(buffers_.size());
    a.timing = "one steady_clock pair around " + std::to_string(threads_) +
               " std::threads each running the whole repeated memcpy loop over its chunk (threads "
               "created before the first clock read, joined before the second); sample = loop time / repetitions";
    a.latency_includes = "one memcpy of the whole buffer split over the threads, amortised over the repeated loop";
    return a;
  }

  void run(std::int64_t samples, std::int64_t repetitions, std::vector<double>& seconds) override {
    for (std::int64_t s = 0; s < samples; ++s) seconds.push_back(time_loop(repetitions) / static_cast<double>(repetitions));
  }

  Verification verify() override { return buffers_.verify(); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { buffers_.poison(); }

  double time_loop(std::int64_t repetitions) {
    using Clock = std::chrono::steady_clock;
    std::atomic<bool> go{false};
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_; ++t) {
      threads.emplace_back([&, t] {
        const host::Chunk c = host::chunk_of(buffers_.size(), threads_, t);
        unsigned char* dst = buffers_.destination() + c.begin;
        const unsigned char* src = buffers_.source() + c.begin;
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        for (std::int64_t r = 0; r < repetitions && move; ++r) {
          std::memcpy(dst, src, c.length);
          asm volatile("" ::: "memory");  // keep repeated copies from being merged
        }
      });
    }
    const auto t0 = Clock::now();
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    const auto t1 = Clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  }

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
