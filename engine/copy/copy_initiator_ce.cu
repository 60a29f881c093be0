// The copy engines: cudaMemcpyAsync on the driving GPU's stream.
#include "backends/cuda/copy_buffers.h"
#include "copy/copy_initiator.h"
#include "backends/cuda/gpu_access.h"

namespace commatlas::cuda {
namespace {

class CopyEngineCopier final : public DeviceCopier {
 public:
  void enqueue(void* dst, const void* src, std::size_t bytes, const Stream& stream) override {
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
  }
};

class CopyEngineLeg final : public LegCopier {
 public:
  CopyEngineLeg(const Leg& leg, PlacedBuffer& src, PlacedBuffer& dst) : dst_buffer_(dst) {
    // A peer copy without peer access would be staged through the host: enable it both ways so
    // the copy engines move the data over the GPU link.
    for (const BufferSpec* e : {&leg.src, &leg.dst})
      if (memory_of(e->allocator) == Memory::Gpu && e->gpu != leg.exec_gpu) {
        enable_peer_access(leg.exec_gpu, e->gpu);
        enable_peer_access(e->gpu, leg.exec_gpu);
      }
    src_ = src.pointer();
    dst_ = dst.pointer();
  }

  void enqueue(std::size_t bytes, const Stream& stream) override { copier_.enqueue(dst_, src_, bytes, stream); }

  // The setup's toucher poisons again (the owning GPU for device memory, a GPU memset for pinned
  // memory, the CPU for the rest): managed memory first touched by the CPU starts each batch on
  // the host, where the record places it.
  void poison_destination(std::size_t, const Stream&) override { dst_buffer_.poison(); }

 private:
  CopyEngineCopier copier_;
  PlacedBuffer& dst_buffer_;
  const void* src_ = nullptr;
  void* dst_ = nullptr;
};

class CopyEngines final : public CopyInitiator {
 public:
  // The launch latency was measured for the copy engines alone first, hence its short key.
  CopyEngines()
      : CopyInitiator({"ce", Mechanism::CopyEngine, "copy engines (cudaMemcpyAsync)",
                       "cudaMemcpyAsync", "gpu.copy_latency"}) {}

  // cudaMemcpyAsync on pageable memory waits for the stream (h2d) or for the copy (d2h) before it
  // returns, so it cannot be queued behind a kernel that waits for the host: it would deadlock.
  // Managed memory kept on the host by advice behaves the same (seen on H200: every such copy
  // held the host until the start-blocking kernel timed out).
  bool holds_host(const BufferSpec& e) const override {
    return e.allocator == Allocator::Pageable || (e.allocator == Allocator::Managed && !e.hint.empty());
  }

  // docs/tiers.md: registered host memory (the SM kernel's stays in the default run).
  std::vector<TierRule> full_tier() const override {
    return {{{{"host_allocator", to_string(Allocator::Registered)}},
             "registered host memory gives the pinned figure within 0.9% at every size (CE h2d and d2h)"}};
  }

  std::unique_ptr<DeviceCopier> device_copier(int, const Params&) const override {
    return std::make_unique<CopyEngineCopier>();
  }

  std::unique_ptr<LegCopier> prepare(const Params&, const Leg& leg, PlacedBuffer& src, PlacedBuffer& dst) const override {
    return std::make_unique<CopyEngineLeg>(leg, src, dst);
  }
};

COMMATLAS_REGISTER_COPY_INITIATOR(CopyEngines);

}  // namespace
}  // namespace commatlas::cuda
