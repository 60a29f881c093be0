// reference.host_memcpy: the bare way to time the operation host.memcpy times, kept next to it so
// a run shows what the harness costs: the same worker pool (the caller plus N-1 threads started once,
// each copying its chunk, the operation over when the last one is), driven by a plain loop with one
// pair of clock reads around each sample's repetitions, no timing helper, no per-sample bookkeeping.
// An earlier version started its own std::threads and met at its own barrier: it measured its
// threading, not the harness (16 threads read 3.9 GB/s against host.memcpy's 190 at 1 MiB on an
// H100 host; a team started once per batch still read 75 against 186 with 32 threads on 2x H200).
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>

#include "backends/host/copy_buffers.h"
#include "backends/host/host_context.h"
#include "backends/host/numa.h"
#include "backends/host/worker_pool.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class BareLoopMemcpy final : public Workload {
 public:
  // `node`: host.memcpy's placement of its first variant (buffers on the node, threads on its CPUs),
  // so both run the same operation: unpinned, 32 threads read 16 MiB 14% slower on an H200 host.
  BareLoopMemcpy(std::size_t bytes, int threads, std::optional<int> node, std::uint64_t seed)
      : threads_(threads),
        buffers_(bytes, node, node, seed),
        cpus_(node ? host::cpus_of_node(*node) : std::vector<int>{}),
        pool_(threads, cpus_) {
    copy_chunk_ = [this](int t) {
      const host::Chunk c = host::chunk_of(buffers_.size(), threads_, t);
      if (c.length && move_) std::memcpy(buffers_.destination() + c.begin, buffers_.source() + c.begin, c.length);
    };
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(buffers_.size());
    a.timing = "one steady_clock pair around each sample's repeated loop of pool operations (" + std::to_string(threads_) +
               " threads, caller included, started with the workload)";
    a.latency_includes = "one memcpy of the whole buffer split over the threads, including their release and join";
    return a;
  }

  void run(std::int64_t samples, std::int64_t repetitions, std::vector<double>& seconds) override {
    using Clock = std::chrono::steady_clock;
    move_ = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE
    const host::ScopedCpuBinding on_node(cpus_);  // the caller is thread 0
    for (std::int64_t s = 0; s < samples; ++s) {
      const auto t0 = Clock::now();
      for (std::int64_t r = 0; r < repetitions; ++r) {
        // One thread is one libc memcpy, as in host.memcpy: releasing an empty pool cost 60% at 4 KiB.
        if (threads_ == 1)
          copy_chunk_(0);
        else
          pool_.run(copy_chunk_);
        asm volatile("" ::: "memory");  // keep repeated copies from being merged
      }
      const auto t1 = Clock::now();
      seconds.push_back(std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(repetitions));
    }
  }

  Verification verify() override { return buffers_.verify(); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { buffers_.poison(); }

  int threads_;
  host::CopyBuffers buffers_;
  std::vector<int> cpus_;
  host::WorkerPool pool_;
  host::WorkerPool::Task copy_chunk_;
  bool move_ = true;
};

class HostMemcpyReference final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"reference.host_memcpy", Category::Reference, Interface::Harness, "host",
                    "bare loop over host.memcpy's worker pool, one clock pair per sample: what the harness adds",
                    Metric::Bandwidth, RankRange{1, 0}, {}, {}};
    // A few of host.memcpy's own sizes, so every point has a partner to be compared with.
    i.default_sizes = {4096, 1ull << 20, 16ull << 20};
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
                                  host_memory(node("src_numa"), "pageable"), host_memory(node("dst_numa"), "pageable"), p,
                                  {"threads", "cpu_numa"});
    m.cache_working_set_per_byte = 2;
    m.reference_of = "host.memcpy";
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    host::require_host_memory(ctx, 2 * bytes);
    const std::optional<int> node = params.has("src_numa") ? std::optional<int>(static_cast<int>(params.integer("src_numa")))
                                                           : std::nullopt;
    return std::make_unique<BareLoopMemcpy>(bytes, static_cast<int>(params.integer("threads")), node, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(HostMemcpyReference);

}  // namespace
}  // namespace commatlas
