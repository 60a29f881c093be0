// MPI on GPU data, the MPI transport's calls over GPU-allocated message buffers
// (backends/mpi/gpu_message_buffers_mpi.h), with the allocator as a parameter of the point-to-point
// protocols (the MI300A study's allocator matrix) and the patterns' faces packed by GPU kernels:
//   staged     mpi.staged.*, pattern.*.staged: the message lives in GPU memory and MPI sees pinned
//              host copies, D2H before each send and H2D after each receive inside the timed
//              operation (how applications ran before they were GPU-aware: the speedups' baseline)
//   gpu_aware  mpi.gpu_aware.*, pattern.*.gpu_aware: MPI handed the allocator's pointer itself; device
//              and managed pointers only when the library says it is CUDA-aware, a recorded Skip
//              otherwise
#include "backends/cuda/gpu_runtime.h"
#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/gpu_pointer_policy.h"
#include "backends/mpi/gpu_support.h"
#include "core/error.h"
#include "core/sizes.h"
#include "transport/device_arena.h"
#include "transport/mpi_transport_mpi.h"

namespace commatlas {
namespace {

class GpuMpiTransport : public OnDeviceArena<MpiTransport> {
 public:
  GpuMpiTransport(mpi::GpuMessagePath path, cuda::MemoryKind allocator, int device, std::size_t send_bytes,
                  std::size_t recv_bytes)
      : OnDeviceArena(device, 0, 0, mpi::gpu_message_buffers(path, allocator, device)({send_bytes, recv_bytes})) {}

  // Both paths pay the process's small copies: the library's copies of each device message, or
  // the staging copies (mpi::MessageBuffers::copy_level_us).
  bool copy_level_witness() const override { return true; }
  std::optional<double> copy_level_us() override { return buffers().copy_level_us(); }

 protected:
  std::string where() const { return "device buffers of GPU " + std::to_string(arena_.device()); }
};

class GpuAwareTransport final : public GpuMpiTransport {
 public:
  using GpuMpiTransport::GpuMpiTransport;
  std::string describe() const override { return where() + " handed to MPI directly (GPU-aware)"; }
};

class StagedTransport final : public GpuMpiTransport {
 public:
  using GpuMpiTransport::GpuMpiTransport;
  std::string describe() const override {
    return where() + " staged through pinned host buffers (D2H of each message before MPI, H2D after)";
  }

  // A pattern's step: every message to host, one MPI exchange there, every received message back.
  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    const auto* dev_send = static_cast<const unsigned char*>(send_home());
    auto* dev_recv = static_cast<unsigned char*>(recv_home());
    auto* host_send = static_cast<unsigned char*>(buffers().send_data());
    auto* host_recv = static_cast<unsigned char*>(buffers().recv_data());
    cuda::DeviceScope scope(arena_.device());
    for (const PeerMessage& m : sends)
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(host_send + m.offset, dev_send + m.offset, m.bytes, cudaMemcpyDeviceToHost,
                                            arena_.stream().get()));
    arena_.stream().synchronize();
    mpi_exchange(host_send, host_recv, sends, recvs);
    for (const PeerMessage& m : recvs)
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dev_recv + m.offset, host_recv + m.offset, m.bytes, cudaMemcpyHostToDevice,
                                            arena_.stream().get()));
    arena_.stream().synchronize();
  }

  // Per bucket: the bucket to host, MPI_Allreduce there, the sum back.
  void allreduce(const float* send, float* recv, std::size_t count) override {
    const std::size_t offset = reinterpret_cast<const unsigned char*>(send) - static_cast<const unsigned char*>(send_home());
    auto* hs = reinterpret_cast<float*>(static_cast<unsigned char*>(buffers().send_data()) + offset);
    auto* hr = reinterpret_cast<float*>(static_cast<unsigned char*>(buffers().recv_data()) + offset);
    arena_.copy(hs, send, count * sizeof(float));
    MpiTransport::allreduce(hs, hr, count);
    arena_.copy(recv, hr, count * sizeof(float));
  }
};

std::optional<std::string> gpu_mpi_unavailable(const Context& ctx) {
  if (auto why = mpi::mpi_run_unavailable(ctx)) return why;
  if (cuda::gpu_count() == 0) return std::string("no GPU visible (no device or driver)");
  return std::nullopt;
}

std::optional<std::string> pattern_unavailable(const Context& ctx) {
  if (auto why = mpi::mpi_run_unavailable(ctx)) return why;
  if (cuda::gpu_count() == 0) return std::string("no GPU visible (no CUDA device or driver)");
  return std::nullopt;
}

int this_rank_gpu(const Context& ctx) { return mpi::rank_gpu(ctx.group); }

// What one operation is, in the order of Protocol's values.
constexpr const char* kProtocolWords[] = {
    "MPI_Send/MPI_Recv ping-pong, half round trip (osu_latency)",
    "windows of 64 MPI_Isend 0 -> 1 (osu_bw)",
    "windows of 64 messages each way at once (osu_bibw)",
};
const char* protocol_words(Protocol p) { return kProtocolWords[static_cast<int>(p)]; }

std::vector<ProtocolBenchmark> protocols(mpi::GpuMessagePath path) {
  const bool staged = path == mpi::GpuMessagePath::Staged;
  std::vector<ProtocolBenchmark> out;
  for (Protocol p : kProtocols) {
    BenchmarkInfo i{std::string(staged ? "mpi.staged." : "mpi.gpu_aware.") + protocol_name(p), Category::PointToPoint,
                    "mpi-gpu",
                    std::string(protocol_words(p)) + " between ranks 0 and 1 on GPU-allocated buffers, " +
                        (staged ? "staged through pinned host memory" : "handed to MPI directly (GPU-aware)"),
                    protocol_metric(p), RankRange{2, 0}, {}, {8, 4096, 1ull << 20}};
    // A window is 64 messages: at 16 MiB one operation already moves 1 GiB (the 64 MiB windows
    // took 12 s of host-staged MPI in a two-GPU default run; --sizes reaches them).
    i.default_sizes = transfer_sizes(8, p == Protocol::PingPong ? 1ull << 20 : 16ull << 20);
    i.full_tier = mpi::gpu_message_tier_rules(path, p == Protocol::Bibw);
    out.push_back({p, i});
  }
  return out;
}

cuda::MemoryKind message_allocator(const Params& p) {
  return p.has("allocator") ? cuda::memory_kind_from_string(p.text("allocator")) : cuda::MemoryKind::Device;
}

TransportSpec gpu_mpi_spec(mpi::GpuMessagePath path) {
  const bool staged = path == mpi::GpuMessagePath::Staged;
  const Mechanism mechanism = staged ? Mechanism::MpiStaged : Mechanism::MpiGpuAware;
  TransportSpec spec{
      mechanism, "mpi-gpu", gpu_mpi_unavailable,
      [path](Context& ctx, const Params& params, std::size_t s, std::size_t r) -> std::unique_ptr<Transport> {
        const cuda::MemoryKind allocator = message_allocator(params);
        if (auto refusal = mpi::gpu_pointer_refusal(path, mpi::allocator_memory(allocator), mpi::mpi_cuda_support()))
          throw Skip(*refusal);
        const int device = mpi::rank_gpu(ctx.group);
        if (path == mpi::GpuMessagePath::Staged)
          return std::make_unique<StagedTransport>(path, allocator, device, s, r);
        return std::make_unique<GpuAwareTransport>(path, allocator, device, s, r);
      },
      protocols(path)};
  spec.variants = [path](const Context& ctx, Protocol protocol) {
    std::vector<Params> out;
    const auto allocators = path == mpi::GpuMessagePath::Staged
                                ? std::vector<cuda::MemoryKind>{cuda::MemoryKind::Device, cuda::MemoryKind::Managed}
                                : std::vector<cuda::MemoryKind>{cuda::MemoryKind::Device, cuda::MemoryKind::Managed,
                                                                cuda::MemoryKind::Pinned, cuda::MemoryKind::Pageable};
    std::string gpus;
    for (const std::string& g : ctx.group.gather_strings(std::to_string(mpi::rank_gpu(ctx.group))))
      gpus += (gpus.empty() ? "" : ",") + g;
    for (cuda::MemoryKind k : allocators)
      out.push_back(Params{{"allocator", to_string(k)}, {"gpus", gpus}, {"direction", std::string(p2p_direction(protocol))}});
    return out;
  };
  spec.movement = [mechanism](const Context&, const Params& p, Protocol protocol) {
    const cuda::MemoryKind allocator = message_allocator(p);
    return p2p_movement(protocol, mechanism, mpi::message_place(allocator, gpu_of_rank(p, 0)),
                        mpi::message_place(allocator, gpu_of_rank(p, 1)));
  };
  spec.refuse_size = mpi_refuse_size;
  PatternSide side{staged ? "staged" : "gpu_aware", true, true, this_rank_gpu, pattern_unavailable};
  if (!staged)
    side.unavailable = [](const Context& ctx) -> std::optional<std::string> {
      if (auto why = pattern_unavailable(ctx)) return why;
      // A library without CUDA support is never handed a device pointer (it may crash on one): the
      // patterns have no allocator variant to skip, so they are not offered at all.
      return mpi::gpu_pointer_refusal(mpi::GpuMessagePath::Direct, mpi::AllocatorMemory::Gpu, mpi::mpi_cuda_support());
    };
  spec.patterns = side;
  return spec;
}

const bool registered = register_transport(gpu_mpi_spec(mpi::GpuMessagePath::Staged)) &&
                        register_transport(gpu_mpi_spec(mpi::GpuMessagePath::Direct));

}  // namespace
}  // namespace commatlas
