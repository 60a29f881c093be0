#include "backends/mpi/gpu_message_buffers_mpi.h"

#include <cstring>
#include <vector>

#include "backends/cuda/copy_level.h"
#include "core/error.h"
#include <algorithm>
#include <optional>

namespace commatlas::mpi {
namespace {

// A rank that only sends (or only receives) has an empty buffer; allocators differ on size 0.
std::size_t at_least_one(std::size_t bytes) { return bytes == 0 ? 1 : bytes; }

class GpuMessageBuffers final : public MessageBuffers {
 public:
  GpuMessageBuffers(GpuMessagePath path, cuda::MemoryKind allocator, int device, MessageSizes sizes)
      : MessageBuffers(sizes),
        path_(path),
        allocator_(allocator),
        device_(device),
        stream_(device),
        send_(allocator, at_least_one(sizes.send_bytes), device),
        recv_(allocator, at_least_one(sizes.recv_bytes), device),
        shadow_(std::max(sizes.send_bytes, sizes.recv_bytes)) {
    if (path == GpuMessagePath::Staged) {
      staging_send_ =
          std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Pinned, at_least_one(sizes.send_bytes), device);
      staging_recv_ =
          std::make_unique<cuda::GpuBuffer>(cuda::MemoryKind::Pinned, at_least_one(sizes.recv_bytes), device);
    }
    // Touch the source now: first-touch page placement and faults stay out of the timed loop.
    copy(send_.data(), shadow_.data(), send_bytes());
    poison_recv();
  }

  MessageMemory memory() const override {
    return path_ == GpuMessagePath::Staged ? MessageMemory::StagedDevice : MessageMemory::Device;
  }
  std::string describe() const override {
    const std::string where = to_string(allocator_) + " buffers of GPU " + std::to_string(device_);
    return path_ == GpuMessagePath::Staged
               ? where + " staged through pinned host buffers (cudaMemcpyAsync D2H before each send, H2D after each "
                         "receive, each synchronised, inside the timed operation)"
               : where + " handed to MPI directly";
  }

  void* send_data() override { return path_ == GpuMessagePath::Staged ? staging_send_->data() : send_.data(); }
  void* recv_data() override { return path_ == GpuMessagePath::Staged ? staging_recv_->data() : recv_.data(); }
  void* send_home() override { return send_.data(); }
  void* recv_home() override { return recv_.data(); }

  void stage_before_send() override {
    if (path_ == GpuMessagePath::Staged) copy(staging_send_->data(), send_.data(), send_bytes());
  }
  void stage_after_receive() override {
    if (path_ == GpuMessagePath::Staged) copy(recv_.data(), staging_recv_->data(), recv_bytes());
  }

  unsigned char* send_view() override { return shadow_.data(); }
  void publish_send() override { copy(send_.data(), shadow_.data(), send_bytes()); }
  const unsigned char* fetch_recv() override {
    copy(shadow_.data(), recv_.data(), recv_bytes());
    return shadow_.data();
  }
  void poison_recv() override {
    cuda::DeviceScope scope(device_);
    for (cuda::GpuBuffer* b : {&recv_, staging_recv_.get()}) {
      if (!b) continue;
      // The runtime cannot memset pageable memory it does not know (H200 run: cudaErrorInvalidValue).
      // recv_bytes(), not the allocation: after a resize the message is a prefix of it.
      if (b->kind() == cuda::MemoryKind::Pageable)
        std::memset(b->data(), 0xFF, recv_bytes());
      else
        COMMATLAS_GPU_CHECK(cudaMemsetAsync(b->data(), 0xFF, recv_bytes(), stream_.get()));
    }
    stream_.synchronize();
  }

 protected:
  // A message in managed memory is measured where the fill left its pages (message_place: on the
  // GPU); the larger size's MPI calls may have moved them, so each size gets fresh buffers.
  bool reusable() const override { return allocator_ != cuda::MemoryKind::Managed; }

 public:
  std::optional<double> copy_level_us() override {
    if (!copy_level_) copy_level_.emplace(device_);  // two 8 B buffers, made on first use
    return copy_level_->measure();
  }

 private:
  // cudaMemcpyDefault: unified addressing tells device, managed, pinned and pageable apart.
  void copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    cuda::DeviceScope scope(device_);
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
    stream_.synchronize();
  }

  GpuMessagePath path_;
  cuda::MemoryKind allocator_;
  int device_;
  cuda::Stream stream_;
  cuda::GpuBuffer send_, recv_;
  std::unique_ptr<cuda::GpuBuffer> staging_send_, staging_recv_;
  std::vector<unsigned char> shadow_;  // host view for filling and checking, outside the timed loop
  std::optional<cuda::CopyLevel> copy_level_;
};

}  // namespace

AllocatorMemory allocator_memory(cuda::MemoryKind kind) {
  return cuda::is_host_memory(kind) ? AllocatorMemory::Host : AllocatorMemory::Gpu;
}

MessageBufferMaker gpu_message_buffers(GpuMessagePath path, cuda::MemoryKind allocator, int device) {
  return [=](MessageSizes sizes) -> std::unique_ptr<MessageBuffers> {
    return std::make_unique<GpuMessageBuffers>(path, allocator, device, sizes);
  };
}

int rank_gpu(const Group& group) {
  const int gpus = cuda::gpu_count();
  return gpus > 0 ? group.local_rank() % gpus : 0;
}

int bind_rank_to_gpu(const Group& group) {
  if (cuda::gpu_count() == 0) return -1;
  const int device = rank_gpu(group);
  COMMATLAS_GPU_CHECK(cudaSetDevice(device));
  // The context is made here, at the job's start, not by whichever benchmark first touches the GPU
  // (before CUDA 12, cudaSetDevice left it to that call). So every figure of the job, host-buffer
  // MPI included, comes from a process that holds one, whatever ran before it; a CUDA-aware MPI
  // pays for a context on host buffers too, and the OSU-method reference is run with one to match
  // (commatlas-osu-ref --gpu-context).
  COMMATLAS_GPU_CHECK(cudaFree(nullptr));
  const RankGpuWrites writes = rank_gpu_writes();
  for (int pass = 0; pass < writes.passes; ++pass) {
    void* block = nullptr;
    COMMATLAS_GPU_CHECK(cudaMalloc(&block, writes.bytes));
    COMMATLAS_GPU_CHECK(cudaMemset(block, 0x5a, writes.bytes));
    COMMATLAS_GPU_CHECK(cudaStreamSynchronize(nullptr));
    COMMATLAS_GPU_CHECK(cudaFree(block));
  }
  return device;
}

RankGpuWrites rank_gpu_writes() {
  constexpr std::size_t kBytes = std::size_t{32} << 20;
  constexpr int kPasses = 16;
  return {kBytes, kPasses,
          "each MPI rank's GPU writes " + std::to_string(kPasses) + " x " + std::to_string(kBytes >> 20) +
              " MiB of device memory (allocated, cudaMemset, freed) when the job binds it, before the first "
              "benchmark: NCCL's latency-bound collectives read 1-4% slower once the process's GPU has written "
              "memory, so a job that ran them first read them faster than the full run"};
}

Endpoint message_place(cuda::MemoryKind allocator, std::optional<int> gpu) {
  // The source is filled by cudaMemcpyAsync from a host shadow: managed pages land on the GPU.
  if (cuda::is_host_memory(allocator)) return host_memory(std::nullopt, cuda::allocator_of(allocator), "cpu");
  return gpu_memory(gpu, cuda::allocator_of(allocator), "gpu");
}

// Figures from the committed 2x H200 runs (results/nvidia-h200-x2/mpi-gpu-default); docs/tiers.md
// lists them per rule.
std::vector<TierRule> gpu_message_tier_rules(GpuMessagePath path, bool bibw) {
  std::vector<TierRule> rules;
  const bool staged = path == GpuMessagePath::Staged;
  if (staged)
    rules.push_back({{{"allocator", to_string(Allocator::Managed)}},
                     "staging copies managed memory like device memory; the GPU-aware path shows managed"});
  if (bibw)
    rules.push_back({{{"gpus", "0,0"}},
                     "two ranks on one GPU: both directions cross the same HBM, 45 s for a figure no link has"});
  if (staged) return rules;
  for (Allocator host : {Allocator::Pinned, Allocator::Pageable})
    rules.push_back({{{"allocator", to_string(host)}},
                     "host buffers handed to the GPU-aware path: 1.2 s per point on H100 (2 ranks, one GPU), mpi.* has "
                     "host buffers"});
  rules.push_back({{{"allocator", to_string(Allocator::Managed)}},
                   "managed memory through GPU-aware MPI is flat from 256 KiB: 3.6-4.5 GB/s up to 64 MiB on 2x H200, "
                   "0.41/0.46 GB/s at 1/16 MiB with both ranks on one H200, where the 16 MiB point alone took 26 s",
                   1ull << 20});
  return rules;
}

}  // namespace commatlas::mpi
