// The copy operation every GPU copy benchmark composes (single copies, bidirectional pairs, the
// pair matrix, fan-out): a set of legs that run at once, each on its own stream of the GPU that
// drives it, by the copy engines or by the SM copy kernel.
#pragma once

#include <memory>
#include <vector>

#include "backends/cuda/copy_buffers.h"
#include "backends/cuda/copy_plan.h"
#include "core/benchmark.h"

namespace commatlas::gpu {

struct CopySetup {
  std::vector<Leg> legs;
  Engine engine = Engine::Ce;
  KernelShape shape;  // SM copies only
  std::uint64_t bytes = 0;
  std::uint64_t seed = 1;
};

// "CUDA events ..." : how a copy sample is timed, in the words the record carries.
std::string copy_timing_text(std::size_t legs, bool host_synchronous);

// The info of a copy benchmark that exists once per engine: key "gpu.copy_ce<suffix>" or
// "gpu.copy_sm<suffix>", its interface, and `what` followed by the engine in words.
// The tier rule every GPU copy benchmark with a device_alloc choice has (docs/tiers.md).
TierRule device_pool_tier_rule();

BenchmarkInfo copy_benchmark_info(Engine engine, const std::string& suffix, const std::string& what,
                                  std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes);

// The workload of a gpu.copy_* variant (params from copy_params()): its legs.
std::unique_ptr<Workload> prepare_copy(const Params& params, Engine engine, std::uint64_t bytes, std::uint64_t seed);

class CopyWorkload final : public Workload {
 public:
  explicit CopyWorkload(const CopySetup& setup);
  ~CopyWorkload() override;
  Accounting accounting() const override;
  void run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) override;
  Verification verify() override;
  bool resize(std::uint64_t bytes) override;
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override;
  struct LegState;
  void enqueue(std::size_t leg);
  CopySetup setup_;
  std::vector<std::unique_ptr<LegState>> legs_;
};

}  // namespace commatlas::gpu
