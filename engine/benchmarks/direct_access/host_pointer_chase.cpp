// host.pointer_chase: CPU load-to-use latency over a working set, from a thread on one NUMA node
// to memory on another (or the same).
#include "backends/host/host_context.h"
#include "backends/host/pointer_chain.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class ChaseWorkload final : public Workload {
 public:
  ChaseWorkload(std::size_t bytes, std::optional<int> cpu_node, std::optional<int> mem_node, std::uint64_t seed)
      : chain_(bytes, mem_node, seed),
        cpus_(cpu_node && chain_.placement() == host::NumaPlacement::Libnuma ? host::cpus_of_node(*cpu_node)
                                                                              : std::vector<int>{}),
        cursor_(chain_.start()) {}

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = 0;  // a latency: no bandwidth is claimed
    // One operation is one load, so the harness's batching (samples of at least min_sample_s,
    // thousands of loads in cache, tens from DRAM) is the chain segment each sample walks, and the
    // budget calibration sees the true cost of an operation.
    a.timing = "host steady_clock around a batch of dependent loads walking the chain; per-load time = sample time / loads";
    a.latency_includes = "one dependent 8-byte load, random line order, TLB misses included";
    a.warm_steps = static_cast<double>(chain_.lines());
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const host::ScopedCpuBinding on_cpu_node(cpus_);
    void* p = cursor_;
    time_host_samples(samples, ops, seconds, [&p] { p = *static_cast<void**>(p); });
    sink_ = p;  // volatile: the final pointer is observable, so no load can be dropped
    cursor_ = p;
    steps_taken_ += static_cast<std::uint64_t>(samples) * static_cast<std::uint64_t>(ops);
  }

  // Every load, timed or not, is counted and the cursor must end where walking the chain that many
  // steps predicts: a chase that skipped loads ends elsewhere. There is no destination to poison.
  Verification verify() override { return chain_.verify(cursor_, steps_taken_); }
  VerifyMethod verify_method() const override { return VerifyMethod::Chain; }

 private:
  void prepare_batch() override {}

  host::PointerChain chain_;
  std::vector<int> cpus_;
  void* cursor_;
  void* volatile sink_ = nullptr;
  std::uint64_t steps_taken_ = 0;
};

class HostPointerChase final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"host.pointer_chase", Category::DirectAccess, "host",
                    "CPU dependent-load latency over a random cyclic chain, per working-set size and NUMA pair",
                    Metric::Latency, RankRange{1, 0}, {}, {}};
    i.default_sizes = geometric_sizes(4ull << 10, 256ull << 20, 16);
    // 256 MiB: memory, beyond the last-level caches we know, so that a smoke run answers for memory
    // too; the default sweep's sizes in between are judged from the latencies (residency.py).
    i.quick_sizes = {64ull << 10, 256ull << 20};
    return i;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    const host::NumaPlacement placement = host::Libnuma::get().placement();
    if (placement == host::NumaPlacement::None) return {Params{{"numa_placement", to_string(placement)}}};
    std::vector<Params> out;
    for (int cpu : host::numa_nodes_to_sweep(ctx))
      for (int mem : host::numa_nodes_to_sweep(ctx))
        out.push_back(Params{{"cpu_numa", std::int64_t{cpu}},
                             {"mem_numa", std::int64_t{mem}},
                             {"numa_placement", to_string(placement)}});
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    Movement m = movement_between(
        Operation::LoadLatency, MoveDirection::Uni, Mechanism::CpuLoadStore,
        host_memory(p.has("mem_numa") ? std::optional<int>(static_cast<int>(p.integer("mem_numa"))) : std::nullopt,
                    Allocator::Pageable),
        cpu_processor(p.has("cpu_numa") ? std::optional<int>(static_cast<int>(p.integer("cpu_numa"))) : std::nullopt));
    m.cache_working_set_per_byte = 1;
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    host::require_host_memory(ctx, bytes);
    std::optional<int> cpu, mem;
    if (params.has("cpu_numa")) cpu = static_cast<int>(params.integer("cpu_numa"));
    if (params.has("mem_numa")) mem = static_cast<int>(params.integer("mem_numa"));
    return std::make_unique<ChaseWorkload>(bytes, cpu, mem, ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(HostPointerChase);

}  // namespace
}  // namespace commatlas
