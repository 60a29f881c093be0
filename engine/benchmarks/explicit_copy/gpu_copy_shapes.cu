// gpu.copy_<initiator>_shapes (gpu.copy_sm_shapes): the settings an initiator offers (the SM copy
// kernel's shapes) swept at one large size, on the local copy and on the peer copy driven from
// either side, so a run shows which setting reaches the link and HBM peaks (and the default can be
// chosen from evidence).
#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas {
namespace {

class GpuCopySettings final : public CopyBenchmark {
 public:
  using CopyBenchmark::CopyBenchmark;

  BenchmarkInfo info() const override {
    return cuda::gpu_suite_info("gpu.copy_" + initiator_->name() + "_shapes", Category::ExplicitCopy,
                                initiator_->settings_words() + ": local and peer 0->1", Metric::Bandwidth,
                                {256ull << 20}, {64ull << 20},
                                {device_pool_tier_rule(),
                                 {{},
                                  "the settings swept at one size: a tuning study; gpu.copy_" + initiator_->name() +
                                      " runs the setting that wins"}});
  }

  // The local copy on GPU 0 and, with 2 GPUs, the peer copy 0 -> 1 written remotely (src side)
  // and read remotely (dst side), each in every setting.
  std::vector<Params> variants(const Context&) const override {
    const int gpus = cuda::gpu_count();
    std::vector<cuda::CopySpec> specs;
    if (gpus >= 1) specs.push_back(cuda::CopySpec{});
    if (gpus >= 2)
      for (cuda::Side side : {cuda::Side::Src, cuda::Side::Dst}) {
        cuda::CopySpec c;
        c.path = cuda::Path::Peer;
        c.dst_gpu = 1;
        c.side = side;
        specs.push_back(c);
      }
    std::vector<Params> out;
    for (const cuda::CopySpec& spec : specs)
      for (const Params& setting : initiator_->settings()) {
        Params p = cuda::copy_params(spec, *initiator_);
        for (const auto& [key, value] : setting.entries()) p.set(key, value);
        out.push_back(p);
      }
    return out;
  }
};

std::unique_ptr<Benchmark> settings_sweep(const cuda::InitiatorPtr& initiator) {
  if (initiator->settings().empty()) return nullptr;
  return std::make_unique<GpuCopySettings>(initiator);
}

COMMATLAS_REGISTER_COPY_FAMILY(settings_sweep);

}  // namespace
}  // namespace commatlas
