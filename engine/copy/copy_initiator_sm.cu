// An SM copy kernel: the driving GPU's SMs load from the source and store to the destination
// (peer and host memory through their mappings), in the shape the variant's params name.
#include "backends/cuda/copy_buffers.h"
#include "copy/copy_initiator.h"
#include "backends/cuda/device_pattern.h"
#include "backends/cuda/kernels.h"

namespace commatlas::cuda {
namespace {

class SmCopier final : public DeviceCopier {
 public:
  SmCopier(int gpu, const KernelShape& shape) : shape_(shape), sms_(sm_count(gpu)) { load_kernels(gpu); }

  void enqueue(void* dst, const void* src, std::size_t bytes, const Stream& stream) override {
    launch_copy(dst, src, bytes, shape_, sms_, stream.get());
  }

 private:
  KernelShape shape_;
  int sms_;
};

class SmCopyLeg final : public LegCopier {
 public:
  SmCopyLeg(const KernelShape& shape, const Leg& leg, PlacedBuffer& src, PlacedBuffer& dst)
      // The kernel dereferences both ends from the driving GPU: peer mappings, host mappings.
      : src_(src.kernel_pointer(leg.exec_gpu)), dst_(dst.kernel_pointer(leg.exec_gpu)), copier_(leg.exec_gpu, shape) {}

  void enqueue(std::size_t bytes, const Stream& stream) override { copier_.enqueue(dst_, src_, bytes, stream); }

  // The copy kernel's own GPU stores the poison through the kernel's pointer: managed pages stay
  // where the warm-up's kernels moved them, as the timed kernels will find them.
  void poison_destination(std::size_t bytes, const Stream& stream) override {
    DeviceScope on(stream.device());
    poison_with_kernel(dst_, bytes, stream.get());
    stream.synchronize();
  }

 private:
  const void* src_;
  void* dst_;
  SmCopier copier_;
};

class SmCopyKernel final : public CopyInitiator {
 public:
  SmCopyKernel()
      : CopyInitiator({"sm", Mechanism::SmCopy, "SM copy kernel (uint4, unroll 4, grid-stride)",
                       "SM copy kernel launch", ""}) {}

  void add_params(Params& p) const override { add_shape(p, KernelShape{}); }
  std::vector<std::string> choices() const override {
    return {"vector_bytes", "unroll", "blocks_per_sm", "threads_per_block"};
  }

  // Every valid shape: 4- and 16-byte accesses, 1 or 4 loads in flight, 1 to 8 blocks per SM.
  std::vector<Params> settings() const override {
    std::vector<Params> out;
    for (int vector_bytes : {4, 16})
      for (int unroll : {1, 4})
        for (int blocks_per_sm : {1, 2, 4, 8}) {
          Params p;
          add_shape(p, KernelShape{vector_bytes, unroll, blocks_per_sm});
          out.push_back(p);
        }
    return out;
  }
  std::string settings_words() const override {
    return "SM copy kernel shapes (vector 4/16 B, unroll 1/4, 1-8 blocks per SM)";
  }

  std::unique_ptr<DeviceCopier> device_copier(int gpu, const Params& params) const override {
    return std::make_unique<SmCopier>(gpu, params.has("vector_bytes") ? shape_from(params) : KernelShape{});
  }

  std::unique_ptr<LegCopier> prepare(const Params& params, const Leg& leg, PlacedBuffer& src,
                                     PlacedBuffer& dst) const override {
    return std::make_unique<SmCopyLeg>(shape_from(params), leg, src, dst);
  }
};

COMMATLAS_REGISTER_COPY_INITIATOR(SmCopyKernel);

}  // namespace
}  // namespace commatlas::cuda
