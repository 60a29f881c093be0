// The benchmark model: the one place a measurement is declared.
//
// A Benchmark is a stateless description (key, taxonomy category, parameters, default sizes) and
// the movement each variant makes (core/movement.h: the one vocabulary of operations, mechanisms
// and places; a record's `interface` is its mechanism's). For each variant and size it prepares a
// Workload: buffers allocated and filled, ready to be timed. The harness (harness.h) does everything else: warm-up, choice of
// iteration counts, keeping every sample, statistics, the data check, the record.
//
// Adding a benchmark is one file in its category folder under engine/benchmarks/ ending in
// COMMATLAS_REGISTER_BENCHMARK(YourBenchmark); the sweep, the data check, the results, `list`
// and `--only` come from the registry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/movement.h"
#include "core/params.h"
#include "core/tiers.h"
#include "core/verification.h"

namespace commatlas {

enum class Category { DirectAccess, ExplicitCopy, PointToPoint, Collective, Pattern, Reference };


enum class Metric { Bandwidth, Latency };

// Which processes a benchmark needs.
struct RankRange {
  int min = 1;
  int max = 1;  // 0: no upper bound
  bool accepts(int n) const { return n >= min && (max == 0 || n <= max); }
};

struct BenchmarkInfo {
  std::string key;          // stable identifier: "host.memcpy", "mpi.pingpong"
  Category category;
  std::string suite;        // "host", "gpu", "mpi", "mpi-gpu": what `--suite` selects
  std::string description;  // one line for `list`
  Metric metric;
  RankRange ranks;
  // Default sweep when the user gives no --sizes; --quick uses the quick sweep.
  std::vector<std::uint64_t> default_sizes;
  std::vector<std::uint64_t> quick_sizes;
  // The variants (or their larger default sizes) only `--full` measures, each rule with the
  // measurement that justified it (core/tiers.h; docs/tiers.md gives the numbers). Empty: every
  // variant is in the default run.
  std::vector<TierRule> full_tier;
};

// The theoretical limit of a path, and where that number comes from (topology/topology.h; a
// record's peak is the node's answer for its movement, core/node_facts.h).
struct Peak {
  double gbps = 0;     // 1e9 bytes/s per direction (sum of directions for bidirectional)
  std::string source;  // "NVLink4 18 links x 26.5625 GB/s (NVML)", ...
};

// Collective bookkeeping: algbw = bytes / time, busbw = algbw * factor (nccl-tests' factors).
struct CollectiveAccounting {
  std::string operation;  // "allreduce", ...
  double bus_factor = 1;
};

// How a workload's samples turn into bytes and times.
struct Accounting {
  // Payload bytes counted for one operation: once per direction, bidirectional sums both.
  double bytes_per_op = 0;
  // Bytes per operation as seen by the user's buffer (goodput); defaults to bytes_per_op.
  double buffer_bytes = 0;
  // How each sample is timed, in words ("host steady_clock around a batch of memcpy calls").
  std::string timing;
  // What one latency figure includes ("half a round trip of MPI_Send+MPI_Recv, host buffers").
  std::string latency_includes;
  // Per iteration, the slowest rank's time (collectives) instead of this rank's own.
  bool max_over_ranks = false;
  // Operations that must be timed one per sample (launch-inclusive latency): never batched.
  bool one_op_per_sample = false;
  // Shortest sample this workload's clock times without its own cost showing; the harness batches
  // operations up to it (0: the run's RunOptions::min_sample_s). GPU event clocks need more than
  // the host clock: see kEventClockMinSampleSeconds.
  double min_sample_s = 0;
  // Dependent steps one operation is made of, when a figure is per step (a pointer chase times
  // kernels of 16384 loads and reports one load): the harness calibrates and budgets on whole
  // operations and divides only the recorded times by this.
  double steps_per_op = 1;
  std::optional<CollectiveAccounting> collective;
  // Each rank's figure pays its own process's small synchronous copies (an MPI transport over
  // device buffers, whose library copies each small message): right before and right after the
  // timed batches every rank times its 8 B copies (Workload::copy_level_us), and the record keeps
  // them per rank (timing.copy_level_us). The copies run at one of a few levels, and two jobs'
  // small-message figures move with them: the witness a comparison of two jobs reads.
  bool copy_level_witness = false;
  // Steps the workload must walk before it is warm, where a warm-up of the usual length does not
  // get there: a chase is warm once every line of its chain has been loaded, one lap (the lines a
  // cache can hold are in it, and the page-table entries of the rest are cached). The usual
  // warm-up walked 72K of a 16 MiB chain's 262K lines on 2x H200, so the timed batches went on
  // filling the cache; a confirmation re-warmed with two samples read a 256 MiB chain 2.1-2.7x
  // slower than its point on the 2-core VM. 0: the usual warm-up is enough.
  double warm_steps = 0;
};

struct Verification {
  bool ok = false;
  std::uint64_t bytes_checked = 0;
  std::string detail;  // on failure: where and what differed
  VerifyMethod method = VerifyMethod::None;  // set by the harness from Workload::verify_method()
};

// One benchmark variant at one size, ready to run. Owns its buffers (RAII).
class Workload {
 public:
  virtual ~Workload() = default;
  virtual Accounting accounting() const = 0;
  // Runs `samples` timed samples of `ops_per_sample` back-to-back operations each and appends,
  // per sample, the time of one operation in seconds (sample time / ops_per_sample). Timing
  // helpers for each clock are in harness.h.
  virtual void run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) = 0;
  // The harness calls this right before each timed run(), outside the timed window; the probe and
  // warm-up runs are not preceded by it (core/verification.h says why it exists).
  void begin_timed_batch() {
    timed_ = true;
    prepare_batch();
  }
  // Checks, after the last timed batch, that the destination holds what only that batch could
  // have written there.
  virtual Verification verify() = 0;
  // Moves this workload to a smaller size inside the buffers it already has, as if prepared at
  // `bytes` (source pattern in place, destination made wrong again, accounting for `bytes`), so a
  // size sweep allocates and fills once per variant. The runner prepares each variant at its
  // largest size and walks down. False (the default): it cannot, and the runner prepares it
  // afresh; a workload whose meaning needs fresh memory (first touch, managed migration,
  // prefetch) says false.
  virtual bool resize(std::uint64_t /*bytes*/) { return false; }
  // The runner's way in to resize(): after it, the probe and warm-up move bytes again even under
  // the planted no-op, as they do after prepare(), so a destination they fill at the new size is
  // what the poisoning before each timed batch must defeat there too.
  bool resize_for_next_size(std::uint64_t bytes) {
    timed_ = false;
    return resize(bytes);
  }
  // How verify() proves it: the record's verified.method.
  virtual VerifyMethod verify_method() const = 0;
  // For a clock whose window holds the host enqueueing each operation (a bare loop's calls are
  // enqueued as they come): the host's seconds to enqueue one, median over the last run()'s
  // samples. A figure no faster than it times the launches, not the operation; the record keeps
  // it (timing.host_enqueue_s). nullopt for every clock that enqueues before its window opens.
  virtual std::optional<double> host_enqueue_s() const { return std::nullopt; }
  // Accounting::copy_level_witness: this rank's 8 B synchronous copy level now, microseconds
  // (backends/cuda/copy_level.h); nullopt where this rank has no GPU.
  virtual std::optional<double> copy_level_us() { return std::nullopt; }

 protected:
  // Makes what the next timed batch must produce wrong again: poisons the destination (helpers in
  // core/pattern.h, backends/cuda/device_pattern.h, MessageBuffers::poison_recv). Workloads with
  // no destination (a chase, the harness's own overhead) do nothing here and say in
  // verify_method() what their check rests on instead.
  virtual void prepare_batch() = 0;
  // The planted fault of COMMATLAS_TEST_SKIP_MOVE: true only inside timed batches, so the probe
  // and warm-up still fill the destination, which is exactly what the poisoning must defeat. Every
  // real move (memcpy, GPU copy, IPC copy, NCCL call, MPI call) is skipped while it is true.
  bool planted_no_move() const { return timed_ && test_skip_move(); }

 private:
  bool timed_ = false;
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual BenchmarkInfo info() const = 0;
  // Why this benchmark cannot run in this context (no MPI, one rank, no GPU, ...); nullopt if it
  // can. Asked before anything is allocated.
  virtual std::optional<std::string> unavailable(const Context&) const { return std::nullopt; }
  // The parameter combinations to sweep; each becomes its own series of records.
  virtual std::vector<Params> variants(const Context&) const { return {Params{}}; }
  // What one variant moves, from where to where, by which mechanism (core/movement.h). Asked once
  // per variant for every record, skips and errors included; with empty params for benchmark-wide
  // records, where only the operation, direction and mechanism are kept (the runner drops the
  // places). The peak and cache residency follow from it (topology/movement_peak.cpp).
  virtual Movement movement(const Context&, const Params&) const = 0;
  // Allocates and fills buffers for one variant and size. Throws Skip when this point cannot
  // run here (too little memory, ...).
  virtual std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const = 0;
};

std::string to_string(Category c);
std::string to_string(Metric m);

}  // namespace commatlas
