// Who makes a GPU copy happen: the copy engines, an SM copy kernel, ... (nvbandwidth calls these
// memcpy initiators). The copy benchmarks (benchmarks/explicit_copy) are written once against
// this interface and measure every initiator registered with COMMATLAS_REGISTER_COPY_INITIATOR,
// so a new way to copy is one class and one registration line: it gets the single copies, the
// pair matrix, the fan-out, and, where it says so, the launch-inclusive latency and a sweep of its
// own settings. No CUDA types here: what an initiator names and which params it adds is
// unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "core/benchmark.h"
#include "core/movement.h"
#include "core/params.h"
#include "core/registry.h"

namespace commatlas::cuda {

class Stream;
class PlacedBuffer;

// The initiator's one operation between addresses the driving GPU can already use (its own
// memory, peer or IPC mappings, mapped host memory): for callers that own their buffers, such as
// a transport copying into a peer's IPC-mapped inbox.
class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;
  // dst[0, bytes) = src[0, bytes), asynchronous on `stream` (a stream of the GPU it was made for).
  virtual void enqueue(void* dst, const void* src, std::size_t bytes, const Stream& stream) = 0;
};

// One leg's copies, ready to enqueue: the addresses the initiator uses, resolved on the driving
// GPU once before timing. Every call is asynchronous on the stream it is given (unless the
// initiator holds the host for this leg, CopyInitiator::holds_host), so the caller decides how
// copies are launched and timed: behind a start-blocking kernel, one at a time with a
// synchronize, or captured into a graph.
class LegCopier {
 public:
  virtual ~LegCopier() = default;
  // One copy of the leg's first `bytes` bytes, src -> dst.
  virtual void enqueue(std::size_t bytes, const Stream& stream) = 0;
  // Poisons the destination before a batch, so that the pages are where the timed copies will
  // find them (managed memory moves to whoever touched it last).
  virtual void poison_destination(std::size_t bytes, const Stream& stream) = 0;
};

// What an initiator is called, in keys, records and descriptions.
struct CopyInitiatorInfo {
  // The key's initiator part: "ce" makes gpu.copy_ce, gpu.copy_ce_matrix, ...
  std::string name;
  Mechanism mechanism;
  // What copies, in the words that end each benchmark's description ("copy engines (cudaMemcpyAsync)").
  std::string words;
  // One copy as a call, for the launch-inclusive latency's description and timing ("cudaMemcpyAsync").
  std::string call;
  // The key of this initiator's launch-inclusive latency benchmark (one copy and a synchronize
  // per sample, host-timed), or "" where it has none.
  std::string latency_key;
};

class CopyInitiator {
 public:
  explicit CopyInitiator(CopyInitiatorInfo info) : info_(std::move(info)) {}
  virtual ~CopyInitiator() = default;

  const CopyInitiatorInfo& info() const { return info_; }
  const std::string& name() const { return info_.name; }
  Mechanism mechanism() const { return info_.mechanism; }

  // The params this initiator adds to every variant (an SM kernel's default shape), and the names
  // among them that the record keeps as choices of the movement.
  virtual void add_params(Params&) const {}
  virtual std::vector<std::string> choices() const { return {}; }
  // Settings worth sweeping at one size (an SM kernel's shapes), each the params it sets, and
  // their description; none: no gpu.copy_<name>_shapes benchmark.
  virtual std::vector<Params> settings() const { return {}; }
  virtual std::string settings_words() const { return ""; }

  // Rules that put more of this initiator's copy variants in the full tier (core/tiers.h), each
  // with the measurement behind it (docs/tiers.md): the copy families add them to their own.
  virtual std::vector<TierRule> full_tier() const { return {}; }

  // Whether copies touching this buffer return only once the host has done its part
  // (cudaMemcpyAsync on pageable memory): such a copy cannot wait behind a start-blocking kernel.
  virtual bool holds_host(const BufferSpec&) const { return false; }

  // The copy on `gpu` in the settings `params` name (the defaults where they name none).
  virtual std::unique_ptr<DeviceCopier> device_copier(int gpu, const Params& params) const = 0;

  // Readies the leg's driving GPU (peer access, kernel modules) and resolves the addresses of
  // `src` and `dst`, which outlive the copier. Throws UsageError on params it cannot use, Skip
  // where this GPU cannot copy between these buffers.
  virtual std::unique_ptr<LegCopier> prepare(const Params& params, const Leg& leg, PlacedBuffer& src,
                                             PlacedBuffer& dst) const = 0;

 private:
  CopyInitiatorInfo info_;
};

using InitiatorPtr = std::shared_ptr<const CopyInitiator>;

// Every initiator this engine was built with. Registration happens at static initialisation, in
// no fixed order across files, so a listener hears of every initiator: those added before it and
// those added after.
class CopyInitiators {
 public:
  static CopyInitiators& instance();
  // Throws std::logic_error on a name registered twice.
  bool add(InitiatorPtr initiator);
  void listen(std::function<void(const InitiatorPtr&)> listener);
  const std::vector<InitiatorPtr>& all() const { return initiators_; }
  InitiatorPtr find(const std::string& name) const;

 private:
  std::vector<InitiatorPtr> initiators_;
  std::vector<std::function<void(const InitiatorPtr&)>> listeners_;
};

// The params of a copy variant driven by `initiator`.
inline Params copy_params(const CopySpec& spec, const CopyInitiator& initiator) {
  Params p = to_params(spec);
  initiator.add_params(p);
  return p;
}

// The copy choices every variant records (who drives it, managed advice), then the initiator's.
inline void keep_initiator_choices(Movement& m, const Params& p, const CopyInitiator& initiator) {
  std::vector<std::string> keys{"engine_side", "managed_hint"};
  for (const std::string& k : initiator.choices()) keys.push_back(k);
  for (const std::string& key : keys)
    for (const auto& [k, v] : p.entries())
      if (k == key) m.choices.set(k, v);
}

// The movement of a gpu.copy_* variant (params from copy_params()), from its first leg; a
// bidirectional copy is that leg and its mirror at once.
inline Movement copy_movement(const Params& p, const CopyInitiator& initiator) {
  if (p.entries().empty()) return movement_of_benchmark(Operation::Copy, MoveDirection::Uni, initiator.mechanism());
  const CopySpec spec = copy_spec_from(p);
  const std::vector<Leg> legs = legs_of(spec);
  Movement m = movement_between(Operation::Copy, move_direction(spec.direction), initiator.mechanism(),
                                place_of(legs.front().src), place_of(legs.front().dst));
  keep_initiator_choices(m, p, initiator);
  m.cache_working_set_per_byte = 2.0 * static_cast<double>(legs.size());  // every source and destination
  return m;
}

}  // namespace commatlas::cuda

// Registers a copy initiator at static-initialisation time: COMMATLAS_REGISTER_COPY_INITIATOR(Type).
#define COMMATLAS_REGISTER_COPY_INITIATOR(Type)                             \
  static const bool COMMATLAS_CONCAT(commatlas_copy_initiator_, __LINE__) = \
      ::commatlas::cuda::CopyInitiators::instance().add(std::make_shared<Type>())
