// The GPU copy benchmarks are families: each is written once and registered once, and measures
// every copy initiator (copy/copy_initiator.h) it applies to, under the key
// "gpu.copy_<initiator><suffix>". A family of plain copy variants (gpu.copy_ce / gpu.copy_sm and
// their _matrix) is a function that lists its CopySpecs; one with its own params or workload
// (fan-out, latency, the SM shape sweep) is a Benchmark class made per initiator.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "copy/copy_workload.h"
#include "backends/cuda/gpu_access.h"
#include "core/registry.h"

namespace commatlas {

// The benchmark a family makes for one initiator, or nullptr where the family does not apply.
using CopyFamily = std::unique_ptr<Benchmark> (*)(const cuda::InitiatorPtr& initiator);

// Registers `family`'s benchmark for every initiator, those registered before and after it.
bool add_copy_family(CopyFamily family);
// Every family's benchmark for `initiator`, registered nowhere: what a new initiator gets.
std::vector<std::unique_ptr<Benchmark>> copy_benchmarks_for(const cuda::InitiatorPtr& initiator);

// The tier rule every GPU copy benchmark with a device_allocator choice has (docs/tiers.md).
TierRule device_pool_tier_rule();

// The info of a copy benchmark: key "gpu.copy_<initiator><suffix>", and `what` followed by the
// initiator in words; its full tier is device_pool's rule and the initiator's own rules.
BenchmarkInfo copy_family_info(const cuda::CopyInitiator& initiator, const std::string& suffix, const std::string& what,
                               std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes);

// A family of plain copies: which ones (CopySpecs for this many GPUs), at which sizes.
struct CopySpecs {
  std::string suffix;  // key: "gpu.copy_<initiator>" + suffix
  std::string what;    // description, before the initiator's words
  std::vector<std::uint64_t> sizes, quick_sizes;
  bool needs_two_gpus = false;
  std::vector<cuda::CopySpec> (*specs)(int gpus) = nullptr;
};

// A copy benchmark of one initiator: GPU-suite, and a plain copy's movement and workload unless
// the family says otherwise.
class CopyBenchmark : public Benchmark {
 public:
  explicit CopyBenchmark(cuda::InitiatorPtr initiator) : initiator_(std::move(initiator)) {}

  std::optional<std::string> unavailable(const Context&) const override { return cuda::no_gpu_reason(); }

  Movement movement(const Context&, const Params& params) const override {
    return cuda::copy_movement(params, *initiator_);
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return cuda::prepare_copy(params, initiator_, bytes, ctx.options.seed);
  }

 protected:
  cuda::InitiatorPtr initiator_;
};

class CopySpecsBenchmark final : public CopyBenchmark {
 public:
  CopySpecsBenchmark(cuda::InitiatorPtr initiator, CopySpecs family)
      : CopyBenchmark(std::move(initiator)), family_(std::move(family)) {}

  BenchmarkInfo info() const override {
    return copy_family_info(*initiator_, family_.suffix, family_.what, family_.sizes, family_.quick_sizes);
  }

  std::optional<std::string> unavailable(const Context&) const override {
    return family_.needs_two_gpus ? cuda::fewer_than_two_gpus() : cuda::no_gpu_reason();
  }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (const cuda::CopySpec& spec : family_.specs(cuda::gpu_count()))
      out.push_back(cuda::copy_params(spec, *initiator_));
    return out;
  }

 private:
  CopySpecs family_;
};

}  // namespace commatlas

// Registers a copy family at static-initialisation time: COMMATLAS_REGISTER_COPY_FAMILY(function).
#define COMMATLAS_REGISTER_COPY_FAMILY(family) \
  static const bool COMMATLAS_CONCAT(commatlas_copy_family_, __LINE__) = ::commatlas::add_copy_family(family)
