// A family of GPU copies measured by one engine: which copies (CopySpecs for this many GPUs), at
// which sizes. gpu.copy_ce/gpu.copy_sm and their _matrix variants are families; adding another is a
// function that lists its specs and one registration per engine.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/copy_workload.h"
#include "backends/cuda/gpu_access.h"

namespace commatlas::gpu {

struct CopyFamily {
  std::string suffix;  // key: "gpu.copy_ce" / "gpu.copy_sm" + suffix
  std::string what;    // description, before the engine's words
  std::vector<std::uint64_t> sizes, quick_sizes;
  bool needs_two_gpus = false;
  std::vector<CopySpec> (*specs)(int gpus) = nullptr;
  // Rules that put more of the family's variants in the full tier, beyond device_pool's.
  std::vector<TierRule> (*full_tier)(Engine engine) = nullptr;
};

class CopyFamilyBenchmark final : public Benchmark {
 public:
  CopyFamilyBenchmark(Engine engine, CopyFamily family) : engine_(engine), family_(std::move(family)) {}

  BenchmarkInfo info() const override {
    BenchmarkInfo i = copy_benchmark_info(engine_, family_.suffix, family_.what, family_.sizes, family_.quick_sizes);
    if (family_.full_tier)
      for (TierRule& rule : family_.full_tier(engine_)) i.full_tier.push_back(std::move(rule));
    return i;
  }

  std::optional<std::string> unavailable(const Context&) const override {
    return family_.needs_two_gpus ? fewer_than_two_gpus() : no_gpu_reason();
  }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (const CopySpec& spec : family_.specs(gpu_count())) out.push_back(copy_params(spec, engine_));
    return out;
  }

  Movement movement(const Context&, const Params& params) const override { return copy_movement(params, engine_); }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return prepare_copy(params, engine_, bytes, ctx.options.seed);
  }

 private:
  Engine engine_;
  CopyFamily family_;
};

}  // namespace commatlas::gpu
