// What a benchmark can see while it decides whether it can run and while it runs.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/group.h"

namespace commatlas {

// A cap that a stable point never reaches (it stops on precision after a few samples) and that
// bounds a noisy one; the fixed mode keeps the budget it always had.
constexpr double kDefaultTimeBudgetPrecision = 0.1;
constexpr double kDefaultTimeBudgetFixed = 0.2;
constexpr double kDefaultTimeBudgetQuick = 0.02;

struct RunOptions {
  std::vector<std::uint64_t> sizes;  // empty: each benchmark's own default sweep
  // Timed time per (variant, size) point, warm-up excluded: a cap when sampling stops on
  // precision, the whole budget in the fixed mode (precision 0). See kDefaultTimeBudget*.
  double time_budget_s = 0.1;
  // Sampling stops once the 95% confidence interval of the median is within +-precision of it
  // (relative); 0: fixed budget, one timed batch filling time_budget_s (the harness before it
  // stopped on precision).
  double precision = 0.005;
  bool quick = false;                // fewer sizes, smaller budget: a smoke run
  bool full = false;                 // the exhaustive tier too (core/tiers.h); default tier only otherwise
  int threads = 0;                   // worker threads for multi-threaded host benchmarks; 0 = all cores
  std::vector<int> numa_nodes;       // NUMA nodes to place buffers on; empty = every node
  std::int64_t min_samples = 5;
  std::int64_t max_samples = 100000;
  std::size_t reservoir = 256;       // samples kept per record (all of them when fewer)
  // A sample shorter than this batches several ops. Two steady_clock reads cost about 70 ns on the
  // VMs we run on (reference.harness_overhead): at 2 us they added 3-4% to an 8-byte MPI ping-pong,
  // at 10 us they stay under 1%.
  double min_sample_s = 10e-6;
  std::int64_t max_ops_per_sample = 1 << 20;
  std::uint64_t seed = 1;            // data pattern seed
  // > 0: repeat each point for this many seconds, one operation per sample where the clock allows,
  // without stopping on a sample count, and keep every sample with its start time (noise over time).
  double soak_s = 0;
  double watchdog_s = 120;           // a point running longer aborts the job (core/watchdog.h); 0 = off
  // Passes of one run must stay apart in its records: the swept environment (env.NAME=value,
  // read by the engine itself) joins every record's params, the repetition its "repeat".
  std::vector<std::pair<std::string, std::string>> record_params;
  std::optional<int> repeat;
  std::set<std::string> skip_points;  // point keys (core/records.h) a resumed run already has
};

// Facts about this machine that benchmarks consult before allocating anything.
struct HostFacts {
  int logical_cpus = 1;
  std::uint64_t memory_total = 0;      // bytes
  std::uint64_t memory_available = 0;  // bytes, at start
  std::vector<int> numa_nodes;         // ids of NUMA nodes with memory (always at least {0})
  bool numa_placement = false;         // libnuma present: buffers can be bound to a node
  std::string cpu_model;
  // The CPU's last-level cache (sysfs, as cpu0 sees it); 0 when unknown. A host figure whose
  // working set fits it is a cache figure (topology/movement_peak.cpp).
  std::uint64_t last_level_cache_bytes = 0;
};

class Context {
 public:
  Context(RunOptions options, Group& group, HostFacts host)
      : options(std::move(options)), group(group), host(std::move(host)) {}

  const RunOptions options;
  Group& group;
  const HostFacts host;

  // Threads a multi-threaded host benchmark uses by default.
  int worker_threads() const { return options.threads > 0 ? options.threads : host.logical_cpus; }
};

HostFacts discover_host();
// Size of the highest-level cache listed under `cache_dir` (sysfs cpuN/cache), 0 if none.
std::uint64_t last_level_cache_bytes(const std::string& cache_dir);

}  // namespace commatlas
