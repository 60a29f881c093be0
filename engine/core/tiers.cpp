#include "core/tiers.h"

#include <fnmatch.h>

#include <variant>

namespace commatlas {
namespace {

std::string text_of(const ParamValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::to_string(std::get<double>(v));
}

bool matches(const TierRule& rule, const std::string& benchmark, const Params& params) {
  if (fnmatch(rule.benchmarks.c_str(), benchmark.c_str(), 0) != 0) return false;
  for (const auto& [key, want] : rule.when) {
    bool found = false;
    for (const auto& [k, v] : params.entries())
      if (k == key) found = want == "*" || (want[0] == '!' ? text_of(v) != want.substr(1) : text_of(v) == want);
    if (!found) return false;
  }
  return true;
}

}  // namespace

// Figures from the committed 2x H200 runs (results/nvidia-h200-x2/gpu-suite-x8, mpi-gpu-default);
// docs/tiers.md lists them per rule.
const std::vector<TierRule>& tier_rules() {
  static const std::vector<TierRule> rules = {
      {"gpu.copy_*", {{"device_alloc", "device_pool"}},
       "device_pool gives the device figure within 0.5% from 1 MiB up (CE and SM, h2d/d2h/d2d)"},
      {"gpu.copy_ce", {{"host_alloc", "registered"}},
       "registered host memory gives the pinned figure within 0.9% at every size (CE h2d and d2h)"},
      {"gpu.copy_sm_shapes", {},
       "48 kernel shapes at one size: a tuning study; gpu.copy_sm runs the shape that wins"},
      {"gpu.copy_*_fanout", {{"root_gpu", "!0"}}, "the same figure as root 0 within 0.2% (one_to_all and all_to_one)"},
      {"gpu.stream_*", {{"location", "managed_prefetched"}}, "prefetched managed memory reads as local HBM within 0.5%"},
      {"gpu.stream_*", {{"location", "managed"}},
       "GPU-first-touched managed memory is local HBM: within 1% of local from 16 MiB, and 3-5x the cost at 1 GiB"},
      {"gpu.stream_*", {{"location", "managed_host_preferred"}}, "host-preferred managed memory reads as pinned within 1%"},
      {"gpu.pointer_chase", {{"location", "managed"}}, "the local chain's latency within 1% at every size, twice its cost"},
      {"host.pointer_chase_gpu_memory", {{"location", "managed_prefetched"}},
       "the managed chain's latency within 5%; 4 GiB points cost 4-5 s each"},
      {"mpi.staged.*", {{"allocator", "managed"}}, "staging copies managed memory like device memory; the GPU-aware path shows managed"},
      {"mpi.*.bibw", {{"gpus", "0,0"}}, "two ranks on one GPU: both directions cross the same HBM, 45 s for a figure no link has"},
      {"mpi.gpu_aware.*", {{"allocator", "pinned"}},
       "host buffers handed to the GPU-aware path: 1.2 s per point on H100 (2 ranks, one GPU), mpi.* has host buffers"},
      {"mpi.gpu_aware.*", {{"allocator", "pageable"}},
       "host buffers handed to the GPU-aware path: 1.2 s per point on H100 (2 ranks, one GPU), mpi.* has host buffers"},
      {"reference.nccl_*", {}, "self-checks of the harness (a bare loop per size), 2.3 s per point"},
      {"mpi.gpu_aware.*", {{"allocator", "managed"}},
       "managed memory through GPU-aware MPI is flat from 256 KiB: 3.6-4.5 GB/s up to 64 MiB on 2x H200, 0.41/0.46 GB/s "
       "at 1/16 MiB with both ranks on one H200, where the 16 MiB point alone took 26 s",
       1ull << 20},
  };
  return rules;
}

const TierRule* full_tier_rule(const std::string& benchmark, const Params& params) {
  for (const TierRule& rule : tier_rules())
    if (rule.above_bytes == 0 && matches(rule, benchmark, params)) return &rule;
  return nullptr;
}

const TierRule* size_cap_rule(const std::string& benchmark, const Params& params) {
  for (const TierRule& rule : tier_rules())
    if (rule.above_bytes > 0 && matches(rule, benchmark, params)) return &rule;
  return nullptr;
}

Tier tier_of(const std::string& benchmark, const Params& params) {
  return full_tier_rule(benchmark, params) ? Tier::Full : Tier::Default;
}

}  // namespace commatlas
