// host.memcpy: libc memcpy between host buffers from 1 and N threads, over NUMA node pairs.
#include "backends/host/host_context.h"
#include "copy/memcpy_workload.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class HostMemcpy final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"host.memcpy", Category::ExplicitCopy, "host",
                    "libc memcpy between host buffers, 1 and N threads, per NUMA node pair", Metric::Bandwidth,
                    RankRange{1, 0}, {}, {}};
    i.default_sizes = geometric_sizes(16, 256ull << 20, 16);
    i.quick_sizes = {4096, 16ull << 20};
    return i;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    std::vector<std::int64_t> thread_counts{1};
    if (ctx.worker_threads() > 1) thread_counts.push_back(ctx.worker_threads());
    const host::NumaPlacement placement = host::Libnuma::get().placement();
    std::vector<Params> out;
    for (std::int64_t threads : thread_counts) {
      if (placement == host::NumaPlacement::None) {
        // Nodes cannot be chosen: one unplaced variant, labelled so nobody reads a node into it.
        out.push_back(Params{{"threads", threads}, {"numa_placement", to_string(placement)}});
        continue;
      }
      for (int src : host::numa_nodes_to_sweep(ctx))
        for (int dst : host::numa_nodes_to_sweep(ctx))
          out.push_back(Params{{"threads", threads},
                               {"src_numa", std::int64_t{src}},
                               {"dst_numa", std::int64_t{dst}},
                               {"cpu_numa", std::int64_t{src}},
                               {"numa_placement", to_string(placement)}});
    }
    return out;
  }

  // Without placement the NUMA params are absent and every numa stays unknown. The node the
  // threads run on is not where the bytes are: a choice.
  Movement movement(const Context&, const Params& p) const override {
    Movement m = movement_between(
        Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
        host_memory(p.has("src_numa") ? std::optional<int>(static_cast<int>(p.integer("src_numa"))) : std::nullopt,
                    Allocator::Pageable),
        host_memory(p.has("dst_numa") ? std::optional<int>(static_cast<int>(p.integer("dst_numa"))) : std::nullopt,
                    Allocator::Pageable),
        p, {"threads", "cpu_numa"});
    m.cache_working_set_per_byte = 2;
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    host::require_host_memory(ctx, 2 * bytes);
    return std::make_unique<host::MemcpyWorkload>(host::memcpy_setup(ctx, params, bytes));
  }
};

COMMATLAS_REGISTER_BENCHMARK(HostMemcpy);

}  // namespace
}  // namespace commatlas
