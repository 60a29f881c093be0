// MPI point-to-point on GPU buffers: the osu-style protocols of backends/mpi/point_to_point.h
// over memory of each rank's GPU, with the allocator as a parameter (the MI300A study's
// allocator matrix).
//   mpi.staged.*:    device or managed buffers staged through pinned host memory (D2H, MPI, H2D)
//   mpi.gpu_aware.*: the allocator's buffer handed to MPI itself; device and managed pointers
//                    only when the library says it is CUDA-aware, a recorded Skip otherwise.
#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/point_to_point.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

struct ProtocolInfo {
  const char* name;
  P2pProtocol protocol;
  Metric metric;
  const char* what;
};

constexpr ProtocolInfo kProtocols[] = {
    {"pingpong", P2pProtocol::PingPong, Metric::Latency, "MPI_Send/MPI_Recv ping-pong, half round trip (osu_latency)"},
    {"bandwidth", P2pProtocol::Unidirectional, Metric::Bandwidth, "windows of 64 MPI_Isend 0 -> 1 (osu_bw)"},
    {"bibw", P2pProtocol::Bidirectional, Metric::Bandwidth, "windows of 64 messages each way at once (osu_bibw)"},
};

class GpuP2p final : public Benchmark {
 public:
  GpuP2p(const ProtocolInfo& protocol, GpuMessagePath path) : protocol_(protocol), path_(path) {}

  BenchmarkInfo info() const override {
    const bool staged = path_ == GpuMessagePath::Staged;
    BenchmarkInfo i{std::string(staged ? "mpi.staged." : "mpi.gpu_aware.") + protocol_.name, Category::PointToPoint,
                    "mpi-gpu",
                    std::string(protocol_.what) + " between ranks 0 and 1 on GPU-allocated buffers, " +
                        (staged ? "staged through pinned host memory" : "handed to MPI directly (GPU-aware)"),
                    protocol_.metric, RankRange{2, 0}, {}, {8, 4096, 1ull << 20}};
    // A window is 64 messages: at 16 MiB one operation already moves 1 GiB (the 64 MiB windows
    // took 12 s of host-staged MPI in a two-GPU default run; --sizes reaches them).
    i.default_sizes = transfer_sizes(8, protocol_.protocol == P2pProtocol::PingPong ? 1ull << 20 : 16ull << 20);
    i.full_tier = gpu_message_tier_rules(path_, protocol_.protocol == P2pProtocol::Bidirectional);
    return i;
  }

  std::optional<std::string> unavailable(const Context& ctx) const override {
    if (auto why = mpi_run_unavailable(ctx)) return why;
    if (gpu_count() == 0) return "no GPU visible (no device or driver)";
    return std::nullopt;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    std::vector<Params> out;
    const auto allocators = path_ == GpuMessagePath::Staged
                                ? std::vector<MemoryKind>{MemoryKind::Device, MemoryKind::Managed}
                                : std::vector<MemoryKind>{MemoryKind::Device, MemoryKind::Managed, MemoryKind::Pinned,
                                                          MemoryKind::Pageable};
    std::string gpus;
    for (const std::string& g : ctx.group.gather_strings(std::to_string(rank_gpu(ctx.group))))
      gpus += (gpus.empty() ? "" : ",") + g;
    for (MemoryKind k : allocators)
      out.push_back(Params{{"allocator", to_string(k)}, {"gpus", gpus}, {"direction", std::string(p2p_direction(protocol_.protocol))}});
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    const Mechanism mechanism = path_ == GpuMessagePath::Staged ? Mechanism::MpiStaged : Mechanism::MpiGpuAware;
    const MemoryKind allocator = p.has("allocator") ? memory_kind_from_string(p.text("allocator")) : MemoryKind::Device;
    return p2p_movement(protocol_.protocol, mechanism, message_place(allocator, gpu_of_rank(p, 0)),
                        message_place(allocator, gpu_of_rank(p, 1)));
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const MemoryKind allocator = memory_kind_from_string(params.text("allocator"));
    if (auto refusal = gpu_pointer_refusal(path_, allocator_memory(allocator), mpi_cuda_support())) throw Skip(*refusal);
    const MessageMemory memory = path_ == GpuMessagePath::Staged ? MessageMemory::StagedDevice : MessageMemory::Device;
    P2pSpec spec{protocol_.protocol, memory, gpu_message_buffers(path_, allocator, rank_gpu(ctx.group))};
    return prepare_p2p_workload(ctx, spec, bytes);
  }

 private:
  const ProtocolInfo& protocol_;
  GpuMessagePath path_;
};

const bool registered = [] {
  for (const ProtocolInfo& p : kProtocols)
    for (GpuMessagePath path : {GpuMessagePath::Staged, GpuMessagePath::Direct})
      Registry::instance().add(std::make_unique<GpuP2p>(p, path));
  return true;
}();

}  // namespace
}  // namespace commatlas
