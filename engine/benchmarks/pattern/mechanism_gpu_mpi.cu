// The MPI mechanisms on GPU data, each with the halo faces packed and unpacked by GPU kernels:
//   staged:    D2H of each message, MPI on pinned host buffers, H2D of each received message
//              (how applications ran before they were GPU-aware; the baseline of the speedups)
//   gpu_aware: MPI handed the device buffers, only when the library says it supports CUDA
//   ipc:       CUDA IPC: each rank maps its neighbours' receive buffers once and copies its
//              messages straight into them (copy engine), with zero-byte MPI messages saying
//              "slot free" before and "data there" after
#include "backends/cuda/gpu_runtime.h"

#include <map>

#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/gpu_pointer_policy.h"
#include "backends/mpi/gpu_support.h"
#include "backends/mpi/ipc_exchange_mpi.h"
#include "backends/mpi/mpi_check.h"
#include "backends/mpi/point_to_point.h"
#include "benchmarks/pattern/device_arena.h"
#include "benchmarks/pattern/mechanism_mpi.h"
#include "core/error.h"

namespace commatlas {
namespace {

class GpuMpiMechanism : public OnDeviceArena<MpiPatternMechanism> {
 public:
  using OnDeviceArena::OnDeviceArena;

 protected:
  std::string where() const { return "device buffers of GPU " + std::to_string(arena_.device()); }
};

class GpuAwareMechanism final : public GpuMpiMechanism {
 public:
  using GpuMpiMechanism::GpuMpiMechanism;
  std::string describe() const override { return where() + " handed to MPI directly (GPU-aware)"; }
};

class StagedMechanism final : public GpuMpiMechanism {
 public:
  StagedMechanism(int device, std::size_t send_bytes, std::size_t recv_bytes)
      : GpuMpiMechanism(device, send_bytes, recv_bytes),
        host_send_(static_cast<unsigned char*>(arena_.allocate(send_bytes, MemoryKind::Pinned))),
        host_recv_(static_cast<unsigned char*>(arena_.allocate(recv_bytes, MemoryKind::Pinned))) {}
  std::string describe() const override {
    return where() + " staged through pinned host buffers (D2H of each message before MPI, H2D after)";
  }

  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    const auto* dev_send = static_cast<const unsigned char*>(arena_.send());
    auto* dev_recv = static_cast<unsigned char*>(arena_.recv());
    DeviceScope scope(arena_.device());
    for (const PeerMessage& m : sends)
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(host_send_ + m.offset, dev_send + m.offset, m.bytes, cudaMemcpyDeviceToHost,
                                            arena_.stream().get()));
    arena_.stream().synchronize();
    mpi_exchange(host_send_, host_recv_, sends, recvs);
    for (const PeerMessage& m : recvs)
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dev_recv + m.offset, host_recv_ + m.offset, m.bytes, cudaMemcpyHostToDevice,
                                            arena_.stream().get()));
    arena_.stream().synchronize();
  }

  // Per bucket: the bucket to host, MPI_Allreduce there, the sum back.
  void allreduce(const float* send, float* recv, std::size_t count) override {
    const std::size_t offset = reinterpret_cast<const unsigned char*>(send) - static_cast<const unsigned char*>(arena_.send());
    auto* hs = reinterpret_cast<float*>(host_send_ + offset);
    auto* hr = reinterpret_cast<float*>(host_recv_ + offset);
    arena_.copy(hs, send, count * sizeof(float));
    MpiPatternMechanism::allreduce(hs, hr, count);
    arena_.copy(recv, hr, count * sizeof(float));
  }

 private:
  unsigned char* host_send_;
  unsigned char* host_recv_;
};

class IpcMechanism final : public GpuMpiMechanism {
 public:
  IpcMechanism(Context& ctx, int device, std::size_t send_bytes, std::size_t recv_bytes)
      : GpuMpiMechanism(device, send_bytes, recv_bytes), rank_(ctx.group.rank()) {
    // Collective: every rank exports its receive buffer and maps every other rank's once (setup).
    const auto handles = exchange_ipc_handles({arena_.recv()}, 1);
    for (int r = 0; r < static_cast<int>(handles.size()); ++r)
      if (r != rank_) peers_[r] = std::make_unique<PeerMapping>(handles[r][0], device);
  }
  ~IpcMechanism() override {
    // Unmap first, then free our own buffer only once no neighbour maps it any longer.
    peers_.clear();
    MPI_Barrier(comm_.get());
  }
  std::string describe() const override {
    return where() + ", each message copied by the copy engine into the neighbour's buffer through CUDA IPC, "
                     "zero-byte MPI messages as slot-free and data-there signals";
  }

  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    // The receiver says its slot is free (it has unpacked the previous step) ...
    signal(recvs, sends, 0);
    const auto* src = static_cast<const unsigned char*>(arena_.send());
    DeviceScope scope(arena_.device());
    for (const PeerMessage& m : sends) {
      auto* dst = static_cast<unsigned char*>(m.peer == rank_ ? arena_.recv() : peers_.at(m.peer)->data());
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst + m.remote_offset, src + m.offset, m.bytes, cudaMemcpyDeviceToDevice,
                                            arena_.stream().get()));
    }
    arena_.stream().synchronize();
    // ... and the sender, once its copies are done, that the data is there.
    signal(sends, recvs, kDoneTag);
  }

 private:
  static constexpr int kDoneTag = 64;
  // Zero-byte messages to every `to` peer, from every `from` peer, tagged with the data message's tag.
  void signal(const std::vector<PeerMessage>& to, const std::vector<PeerMessage>& from, int tag_base) {
    requests_.assign(to.size() + from.size(), MPI_REQUEST_NULL);
    std::size_t r = 0;
    for (const PeerMessage& m : from)
      COMMATLAS_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, m.peer, tag_base + m.tag, comm_.get(), &requests_[r++]));
    for (const PeerMessage& m : to)
      COMMATLAS_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, m.peer, tag_base + m.tag, comm_.get(), &requests_[r++]));
    COMMATLAS_MPI(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  }
  int rank_;
  std::map<int, std::unique_ptr<PeerMapping>> peers_;
};

std::optional<std::string> gpu_mpi_unavailable(const Context& ctx) {
  if (auto why = mpi_run_unavailable(ctx)) return why;
  if (gpu_count() == 0) return std::string("no GPU visible (no CUDA device or driver)");
  return std::nullopt;
}

int this_rank_gpu(const Context& ctx) { return rank_gpu(ctx.group); }

const bool registered = [] {
  register_pattern_benchmarks(MechanismSpec{
      Mechanism::MpiStaged, "staged", "mpi-gpu", true, true, gpu_mpi_unavailable, this_rank_gpu,
      [](Context& ctx, std::size_t s, std::size_t r) -> std::unique_ptr<PatternMechanism> {
        return std::make_unique<StagedMechanism>(rank_gpu(ctx.group), s, r);
      }});
  register_pattern_benchmarks(MechanismSpec{
      Mechanism::MpiGpuAware, "gpu_aware", "mpi-gpu", true, true,
      [](const Context& ctx) -> std::optional<std::string> {
        if (auto why = gpu_mpi_unavailable(ctx)) return why;
        // A library without CUDA support is never handed a device pointer (it may crash on one).
        return gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, mpi_cuda_support());
      },
      this_rank_gpu,
      [](Context& ctx, std::size_t s, std::size_t r) -> std::unique_ptr<PatternMechanism> {
        return std::make_unique<GpuAwareMechanism>(rank_gpu(ctx.group), s, r);
      }});
  register_pattern_benchmarks(MechanismSpec{
      Mechanism::CudaIpcCe, "ipc", "mpi-gpu", true, false,
      [](const Context& ctx) -> std::optional<std::string> {
        if (auto why = gpu_mpi_unavailable(ctx)) return why;
        if (ctx.group.local_size() != ctx.group.size()) return std::string("CUDA IPC needs every rank on one node");
        return std::nullopt;
      },
      this_rank_gpu,
      [](Context& ctx, std::size_t s, std::size_t r) -> std::unique_ptr<PatternMechanism> {
        return std::make_unique<IpcMechanism>(ctx, rank_gpu(ctx.group), s, r);
      }});
  return true;
}();

}  // namespace
}  // namespace commatlas
