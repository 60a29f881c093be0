// gpu.stream_read / gpu.stream_write / gpu.stream_copy: STREAM-style kernels run by GPU 0 on
// arrays that live in its HBM, a peer's HBM, pinned host memory, managed memory (no hint,
// prefetched, host-preferred) or pageable memory.
#include <memory>

#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_access.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/placement.h"
#include "core/pattern.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

enum class StreamKernel { Read, Write, Copy };

std::string to_string(StreamKernel k) {
  return k == StreamKernel::Read ? "read" : k == StreamKernel::Write ? "write" : "copy";
}

// The sum (mod 2^64) of the pattern's 64-bit words: what a read that really read must produce.
std::uint64_t pattern_word_sum(std::size_t bytes, std::uint64_t seed) {
  std::uint64_t sum = 0;
  for (std::size_t w = 0; w < bytes / 8; ++w) sum += pattern_word(seed, w);
  return sum;
}

class StreamWorkload final : public Workload {
 public:
  StreamWorkload(StreamKernel kernel, cuda::Location where, int gpu, const cuda::KernelShape& shape,
                 std::uint64_t bytes, std::uint64_t seed)
      : kernel_(kernel),
        where_(where),
        gpu_(gpu),
        shape_(shape),
        bytes_(bytes),
        seed_(seed),
        fill_key_(pattern_word(seed, 0x57524954ull)),
        stream_(gpu),
        sms_(cuda::sm_count(gpu)) {
    if (bytes % 16 != 0) throw Skip("STREAM kernels need a size that is a multiple of 16 bytes");
    cuda::load_kernels(gpu);
    const cuda::MemoryKind kind = cuda::memory_kind_of(cuda::buffer_of(where, gpu).allocator);
    cuda::require_kernel_access(kind, gpu);  // before allocating: pageable memory may be out of reach
    if (cuda::is_host_memory(kind)) cuda::require_host_bytes(bytes * (kernel == StreamKernel::Copy ? 2 : 1));
    if (kernel_ != StreamKernel::Write) {
      a_ = std::make_unique<cuda::PlacedBuffer>(cuda::buffer_of(where, gpu), bytes);
      a_->fill_pattern(seed);
      place(*a_, where, gpu);
      a_ptr_ = a_->kernel_pointer(gpu);
    }
    if (kernel_ != StreamKernel::Read) {
      b_ = std::make_unique<cuda::PlacedBuffer>(cuda::buffer_of(where, gpu), bytes);
      b_->poison();
      place(*b_, where, gpu);
      b_ptr_ = b_->kernel_pointer(gpu);
    } else {
      sum_ = std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Device, sizeof(unsigned long long), gpu);
      COMMATLAS_GPU_CHECK(cudaMemset(sum_->data(), 0, sizeof(unsigned long long)));
    }
  }

  Accounting accounting() const override {
    Accounting a;
    a.min_sample_s = cuda::kEventClockMinSampleSeconds;
    const int directions = kernel_ == StreamKernel::Copy ? 2 : 1;
    a.bytes_per_op = static_cast<double>(bytes_) * directions;  // copy counts the read and the write
    a.buffer_bytes = static_cast<double>(bytes_);
    a.timing = "CUDA events around a batch of kernels queued behind a spin kernel (blocked start)";
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    cuda::DeviceScope scope(gpu_);
    cuda::time_event_samples({&stream_}, samples, ops, seconds, [this](std::size_t) {
      switch (kernel_) {
        case StreamKernel::Read:
          cuda::launch_read_sum(a_ptr_, bytes_, sum_->as<unsigned long long>(), shape_, sms_, stream_.get());
          ++reads_;
          break;
        case StreamKernel::Write:
          if (!planted_no_move())
            cuda::launch_fill_words(b_ptr_, bytes_, fill_key_, shape_, sms_, stream_.get());  // test-only switch
          break;
        case StreamKernel::Copy:
          if (!planted_no_move())
            cuda::launch_copy(b_ptr_, a_ptr_, bytes_, shape_, sms_, stream_.get());  // test-only switch
          break;
      }
    });
  }

  // Managed locations re-prepare: where their pages are is what they measure.
  bool resize(std::uint64_t bytes) override {
    if ((a_ && !a_->resizable()) || (b_ && !b_->resizable()) || bytes % 16 != 0) return false;
    cuda::DeviceScope scope(gpu_);
    bytes_ = bytes;
    if (a_) a_->resize(bytes);
    if (b_) {
      b_->resize(bytes);
      b_->poison();
    }
    if (sum_) COMMATLAS_GPU_CHECK(cudaMemset(sum_->data(), 0, sizeof(unsigned long long)));
    reads_ = 0;
    return true;
  }

  Verification verify() override {
    Verification v;
    cuda::DeviceScope scope(gpu_);
    if (kernel_ == StreamKernel::Copy) return b_->check_pattern(seed_);
    if (kernel_ == StreamKernel::Write) {
      const std::size_t bad = cuda::find_fill_mismatch_on_device(b_ptr_, bytes_, fill_key_, stream_.get());
      if (bad < bytes_ / 8) {
        v.detail = "word " + std::to_string(bad) + " of the written array does not hold what the fill kernel stores";
        return v;
      }
    } else {
      unsigned long long got = 0;
      COMMATLAS_GPU_CHECK(cudaMemcpy(&got, sum_->data(), sizeof got, cudaMemcpyDeviceToHost));
      const std::uint64_t expected = pattern_word_sum(bytes_, seed_) * reads_;
      if (got != expected) {
        v.detail = "the read kernels' sum " + std::to_string(got) + " differs from the CPU's " + std::to_string(expected) +
                   " over " + std::to_string(reads_) + " reads";
        return v;
      }
    }
    v.ok = true;
    v.bytes_checked = bytes_;
    return v;
  }
  // A read has no destination: its sum counts every read, timed or not, so a read kernel that did
  // nothing leaves the sum short of reads x the pattern's sum.
  VerifyMethod verify_method() const override { return kernel_ == StreamKernel::Read ? VerifyMethod::Sum : VerifyMethod::Bytes; }

 private:
  // The running GPU poisons the written array through the kernels' pointer, so the stores land
  // where the timed stores do: managed pages stay on the GPU the warm-up moved them to (a CPU
  // memset would pull them back and the timed kernels would time their migration).
  void prepare_batch() override {
    if (kernel_ == StreamKernel::Read) return;
    cuda::DeviceScope scope(gpu_);
    cuda::poison_with_kernel(b_ptr_, bytes_, stream_.get());
    stream_.synchronize();
  }

  StreamKernel kernel_;
  cuda::Location where_;
  int gpu_;
  cuda::KernelShape shape_;
  std::uint64_t bytes_, seed_, fill_key_;
  cuda::Stream stream_;
  int sms_;
  std::unique_ptr<cuda::PlacedBuffer> a_, b_;
  void* a_ptr_ = nullptr;
  void* b_ptr_ = nullptr;
  std::unique_ptr<cuda::GpuBuffer> sum_;
  std::uint64_t reads_ = 0;
};

class GpuStream : public Benchmark {
 public:
  explicit GpuStream(StreamKernel kernel) : kernel_(kernel) {}

  BenchmarkInfo info() const override {
    static const char* what[] = {"read (sum of every word into one word)", "write (fill)", "copy (b[i] = a[i])"};
    return cuda::gpu_suite_info(
        "gpu.stream_" + to_string(kernel_), Category::DirectAccess,
        std::string("STREAM ") + what[static_cast<int>(kernel_)] +
            " by GPU 0 on local/peer HBM, pinned host, managed (no hint/prefetched/host-preferred), pageable",
        Metric::Bandwidth, cuda::gpu_bandwidth_sizes(), cuda::gpu_bandwidth_quick_sizes(),
        // docs/tiers.md, from the committed 2x H200 gpu-suite-x8 run
        {{{{"allocator", to_string(Allocator::Managed)}, {"managed_hint", "prefetched"}},
          "prefetched managed memory reads as local HBM within 0.5%"},
         {{{"allocator", to_string(Allocator::Managed)}, {"managed_hint", "none"}},
          "GPU-first-touched managed memory is local HBM: within 1% of local from 16 MiB, and 3-5x the "
          "cost at 1 GiB"},
         {{{"allocator", to_string(Allocator::Managed)}, {"managed_hint", cuda::kHostPreferred}},
          "host-preferred managed memory reads as pinned within 1%"}});
  }

  std::optional<std::string> unavailable(const Context&) const override { return cuda::no_gpu_reason(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (cuda::Location l : cuda::locations(cuda::gpu_count(), true)) {
      Params p = cuda::location_params(l, 0);
      cuda::add_shape(p, cuda::KernelShape{});
      out.push_back(p);
    }
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    const Operation op = kernel_ == StreamKernel::Read    ? Operation::Read
                         : kernel_ == StreamKernel::Write ? Operation::Write
                                                          : Operation::Copy;
    if (p.entries().empty()) return movement_of_benchmark(op, MoveDirection::Uni, Mechanism::GpuLoadStore);
    const cuda::Location l = cuda::location_from(p);
    const int gpu = static_cast<int>(p.integer("gpu"));
    const auto memory = cuda::place_of(l, gpu, true);
    Movement m;
    switch (kernel_) {
      case StreamKernel::Read:
        m = movement_between(op, MoveDirection::Uni, Mechanism::GpuLoadStore, memory, gpu_processor(gpu));
        break;
      case StreamKernel::Write:
        m = movement_between(op, MoveDirection::Uni, Mechanism::GpuLoadStore, gpu_processor(gpu), memory);
        break;
      case StreamKernel::Copy:
        // Both arrays in one place; the GPU whose SMs copy is declared apart (`by`): GPU 0 copying
        // within GPU 1's memory reads and writes over the link, which no copy local to GPU 1 does.
        m = movement_between(op, MoveDirection::Uni, Mechanism::GpuLoadStore, memory, memory);
        m.by = gpu_processor(gpu);
        break;
    }
    cuda::keep_copy_choices(m, p);  // the shape, and managed memory's hint
    m.cache_working_set_per_byte = kernel_ == StreamKernel::Copy ? 2 : 1;
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    return std::make_unique<StreamWorkload>(kernel_, cuda::location_from(params),
                                            static_cast<int>(params.integer("gpu")), cuda::shape_from(params), bytes,
                                            ctx.options.seed);
  }

 private:
  StreamKernel kernel_;
};

class GpuStreamRead final : public GpuStream {
 public:
  GpuStreamRead() : GpuStream(StreamKernel::Read) {}
};
class GpuStreamWrite final : public GpuStream {
 public:
  GpuStreamWrite() : GpuStream(StreamKernel::Write) {}
};
class GpuStreamCopy final : public GpuStream {
 public:
  GpuStreamCopy() : GpuStream(StreamKernel::Copy) {}
};

COMMATLAS_REGISTER_BENCHMARK(GpuStreamRead);
COMMATLAS_REGISTER_BENCHMARK(GpuStreamWrite);
COMMATLAS_REGISTER_BENCHMARK(GpuStreamCopy);

}  // namespace
}  // namespace commatlas
