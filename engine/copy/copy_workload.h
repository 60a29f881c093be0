// The copy operation every GPU copy benchmark composes (single copies, bidirectional pairs, the
// pair matrix, fan-out): a set of legs that run at once, each on its own stream of the GPU that
// drives it, copied by one initiator (copy_initiator.h).
#pragma once

#include <memory>
#include <vector>

#include "backends/cuda/copy_buffers.h"
#include "copy/copy_initiator.h"
#include "core/benchmark.h"

namespace commatlas::cuda {

struct CopySetup {
  std::vector<Leg> legs;
  InitiatorPtr initiator;
  Params params;  // the variant's: the initiator reads its settings (an SM kernel's shape) here
  std::uint64_t bytes = 0;
  std::uint64_t seed = 1;
};

// "CUDA events ..." : how a copy sample is timed, in the words the record carries.
std::string copy_timing_text(std::size_t legs, bool host_synchronous);

// Whether any leg's copies hold the host (CopyInitiator::holds_host): then no blocked start.
bool holds_host(const CopySetup& setup);

// The workload of a gpu.copy_* variant (params from copy_params()): its legs.
std::unique_ptr<Workload> prepare_copy(const Params& params, const InitiatorPtr& initiator, std::uint64_t bytes,
                                       std::uint64_t seed);

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
  CopySetup setup_;
  std::vector<std::unique_ptr<LegState>> legs_;
};

}  // namespace commatlas::cuda
