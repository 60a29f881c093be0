// reference.host_memcpy: the bare way to time the operation host.memcpy times, kept next to it so
// a run shows what the harness costs. It wraps host.memcpy's own workload (the same buffers,
// worker pool, CPU pinning, poisoning before each batch and resizing inside the largest size's
// buffers) and times its operation from a plain loop: one pair of clock reads around each sample's
// repetitions, no timing helper, no per-sample bookkeeping. Only the loop is its own, so any gap
// between the two is the harness's, not a difference in how the bytes were laid out.
// Earlier versions kept their own buffers and threads and measured those instead: threads started
// inside each sample read 3.9 against host.memcpy's 190 GB/s at 1 MiB on an H100 host; a poison
// done by one unbound thread instead of the copying threads left the destination in other caches,
// and at 256 MiB host.memcpy read 9-14% faster than the bare loop on 2x H200.
#include <chrono>
#include <optional>

#include "backends/host/host_context.h"
#include "copy/memcpy_workload.h"
#include "backends/host/numa.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class BareLoopMemcpy final : public Workload {
 public:
  explicit BareLoopMemcpy(const host::MemcpySetup& setup) : memcpy_(setup), threads_(setup.threads) {}

  Accounting accounting() const override {
    Accounting a = memcpy_.accounting();
    a.timing = "one steady_clock pair around each sample's repeated loop of host.memcpy's operation (" +
               std::to_string(threads_) + (threads_ > 1 ? " threads, caller included)" : " thread)");
    return a;
  }

  void run(std::int64_t samples, std::int64_t repetitions, std::vector<double>& seconds) override {
    using Clock = std::chrono::steady_clock;
    const host::ScopedCpuBinding on_node(memcpy_.caller_cpus());
    for (std::int64_t s = 0; s < samples; ++s) {
      const auto t0 = Clock::now();
      for (std::int64_t r = 0; r < repetitions; ++r) memcpy_.copy_once();
      const auto t1 = Clock::now();
      seconds.push_back(std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(repetitions));
    }
  }

  Verification verify() override { return memcpy_.verify(); }
  VerifyMethod verify_method() const override { return memcpy_.verify_method(); }
  bool resize(std::uint64_t bytes) override { return memcpy_.resize_for_next_size(bytes); }

 private:
  // The wrapped workload's own batch start: its poisoning, and the planted no-op's switch
  // (COMMATLAS_TEST_SKIP_MOVE), which copy_once() obeys.
  void prepare_batch() override { memcpy_.begin_timed_batch(); }

  host::MemcpyWorkload memcpy_;
  int threads_;
};

class HostMemcpyReference final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"reference.host_memcpy", Category::Reference, "host",
                    "bare loop over host.memcpy's own operation, one clock pair per sample: what the harness adds",
                    Metric::Bandwidth, RankRange{1, 0}, {}, {}};
    // A few of host.memcpy's own sizes, so every point has a partner to be compared with, and its
    // largest, so both sweeps run inside buffers of the same size (one in DRAM, not cache).
    i.default_sizes = {4096, 1ull << 20, 16ull << 20, 256ull << 20};
    i.quick_sizes = {16ull << 20};
    return i;
  }

  // host.memcpy's first variant of each thread count: one thread (an operation that repeats well,
  // so the harness itself can be judged) and all of them (a 32-thread memcpy moved by tens of
  // percent between identical pairs on an H200 host); where NUMA placement works, the same node
  // for buffers and threads.
  std::vector<Params> variants(const Context& ctx) const override {
    const host::NumaPlacement placement = host::Libnuma::get().placement();
    std::vector<Params> out;
    std::vector<std::int64_t> thread_counts{1};
    if (ctx.worker_threads() > 1) thread_counts.push_back(ctx.worker_threads());
    for (std::int64_t threads : thread_counts) {
      Params p{{"threads", threads}, {"numa_placement", to_string(placement)}};
      if (placement == host::NumaPlacement::Libnuma) {
        const std::int64_t node = host::numa_nodes_to_sweep(ctx).front();
        p.set("src_numa", node);
        p.set("dst_numa", node);
        p.set("cpu_numa", node);
      }
      out.push_back(p);
    }
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    auto node = [&](const char* key) { return p.has(key) ? std::optional<int>(static_cast<int>(p.integer(key))) : std::nullopt; };
    Movement m = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                                  host_memory(node("src_numa"), Allocator::Pageable),
                                  host_memory(node("dst_numa"), Allocator::Pageable), p, {"threads", "cpu_numa"});
    m.cache_working_set_per_byte = 2;
    m.reference_of = "host.memcpy";
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    host::require_host_memory(ctx, 2 * bytes);
    return std::make_unique<BareLoopMemcpy>(host::memcpy_setup(ctx, params, bytes));
  }
};

COMMATLAS_REGISTER_BENCHMARK(HostMemcpyReference);

}  // namespace
}  // namespace commatlas
