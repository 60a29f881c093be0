#include "copy/copy_workload.h"

#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"

namespace commatlas::cuda {

struct CopyWorkload::LegState {
  LegState(const Leg& leg, std::size_t bytes) : src(leg.src, bytes), dst(leg.dst, bytes), stream(leg.exec_gpu) {}
  PlacedBuffer src;
  PlacedBuffer dst;
  Stream stream;
  std::unique_ptr<LegCopier> copier;
};

bool holds_host(const CopySetup& setup) {
  for (const Leg& leg : setup.legs)
    if (setup.initiator->holds_host(leg.src) || setup.initiator->holds_host(leg.dst)) return true;
  return false;
}

std::string copy_timing_text(std::size_t legs, bool host_synchronous) {
  std::string text =
      host_synchronous
          ? "CUDA events on the driving GPU's stream around a batch of copies enqueued without a blocked start "
            "(cudaMemcpyAsync on pageable or host-preferred managed memory holds the host, so host-side work is included)"
          : "CUDA events on the driving GPU's stream around a batch of copies queued behind a spin kernel "
            "(blocked start), so they run back-to-back without launch gaps";
  if (legs > 1)
    text += "; " + std::to_string(legs) + " copies at once, one stream each, the sample ends when the slowest does";
  return text;
}

std::unique_ptr<Workload> prepare_copy(const Params& params, const InitiatorPtr& initiator, std::uint64_t bytes,
                                       std::uint64_t seed) {
  CopySetup setup;
  setup.legs = legs_of(copy_spec_from(params));
  setup.initiator = initiator;
  setup.params = params;
  setup.bytes = bytes;
  setup.seed = seed;
  return std::make_unique<CopyWorkload>(setup);
}

CopyWorkload::CopyWorkload(const CopySetup& setup) : setup_(setup) {
  std::uint64_t host_bytes = 0;
  for (const Leg& leg : setup_.legs)
    for (const BufferSpec* e : {&leg.src, &leg.dst})
      if (memory_of(e->allocator) == Memory::Host) host_bytes += setup_.bytes;
  if (host_bytes) require_host_bytes(host_bytes);

  for (const Leg& leg : setup_.legs) {
    auto state = std::make_unique<LegState>(leg, setup_.bytes);
    state->copier = setup_.initiator->prepare(setup_.params, leg, state->src, state->dst);
    state->src.fill_pattern(setup_.seed);
    state->dst.poison();
    legs_.push_back(std::move(state));
  }
}

CopyWorkload::~CopyWorkload() = default;

Accounting CopyWorkload::accounting() const {
  Accounting a;
  a.min_sample_s = kEventClockMinSampleSeconds;
  a.bytes_per_op = bytes_per_op(setup_.legs, setup_.bytes);
  a.buffer_bytes = static_cast<double>(setup_.bytes) * static_cast<double>(setup_.legs.size());
  a.timing = copy_timing_text(setup_.legs.size(), holds_host(setup_));
  return a;
}

void CopyWorkload::prepare_batch() {
  for (const auto& leg : legs_) leg->copier->poison_destination(setup_.bytes, leg->stream);
}

void CopyWorkload::run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) {
  std::vector<const Stream*> streams;
  for (const auto& leg : legs_) streams.push_back(&leg->stream);
  DeviceScope scope(legs_.front()->stream.device());
  const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE): every initiator alike
  time_event_samples(streams, samples, ops, seconds, [this, move](std::size_t i) {
    DeviceScope on(legs_[i]->stream.device());
    if (move) legs_[i]->copier->enqueue(setup_.bytes, legs_[i]->stream);
  }, holds_host(setup_) ? LaunchMode::Immediate : LaunchMode::BlockedStart);
}

bool CopyWorkload::resize(std::uint64_t bytes) {
  for (const auto& leg : legs_)
    if (!leg->src.resizable() || !leg->dst.resizable()) return false;
  // The source's prefix already holds the pattern (a function of the byte's index); the
  // destination's holds the larger size's copy, which a copy that did nothing would pass.
  for (const auto& leg : legs_) {
    leg->src.resize(bytes);
    leg->dst.resize(bytes);
    leg->dst.poison();
  }
  setup_.bytes = bytes;
  return true;
}

Verification CopyWorkload::verify() {
  Verification all;
  for (const auto& leg : legs_) {
    Verification v = leg->dst.check_pattern(setup_.seed);
    if (!v.ok) return v;
    all.bytes_checked += v.bytes_checked;
  }
  all.ok = true;
  return all;
}

}  // namespace commatlas::cuda
