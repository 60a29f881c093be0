// The GPU-initiated mechanism as a transport across processes: ranks 0 and 1, one GPU each, map
// each other's inbox and control words with CUDA IPC once (handles traded over MPI, never timed),
// then their kernels store and flag straight into the peer's memory (gpu_initiated.ipc.pingpong,
// gpu_initiated.ipc.bandwidth; suite mpi-gpu). The patterns the same way over every rank of the node
// (pattern.halo2d.gpu_initiated, .halo3d, .neighbor): each rank maps every other rank's receive
// buffer and pattern control words. The kernels and the link are gpu_initiated.h's.
// NVIDIA only, as the kernels are.
#ifndef COMMATLAS_HIP

#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/ipc_exchange_mpi.h"
#include "backends/mpi/mpi_comm.h"
#include "core/sizes.h"
#include "transport/gpu_initiated.h"

namespace commatlas {
namespace {

class IpcTransport final : public GpuInitiatedTransport {
 public:
  // Collective: every rank trades handles, ranks past 1 export nothing and drive no end.
  IpcTransport(Context& ctx, LaunchMode mode, std::size_t bytes) : GpuInitiatedTransport(mode, "CUDA IPC mapping"), group_(ctx.group) {
    bytes_ = bytes;
    const int rank = ctx.group.rank();
    std::vector<void*> exported;
    if (rank <= kPeerEnd && bytes > 0) {
      sides_.push_back(std::make_unique<Side>(ctx.group.local_rank() % cuda::gpu_count(), bytes));
      ends_ = {rank};
      sides_[0]->initiator = rank == kOriginEnd;
      exported = {sides_[0]->inbox.data(), sides_[0]->control.data()};
    }
    const auto handles = mpi::exchange_ipc_handles(exported, 2);
    if (!sides_.empty()) {
      Side& s = *sides_[0];
      const int peer = rank == kOriginEnd ? kPeerEnd : kOriginEnd;
      inbox_ = std::make_unique<mpi::PeerMapping>(handles[peer][0], s.device);
      control_ = std::make_unique<mpi::PeerMapping>(handles[peer][1], s.device);
      s.peer_inbox = static_cast<unsigned char*>(inbox_->data());
      s.peer_control = static_cast<std::uint64_t*>(control_->data());
      start_link();
    }
    group_.barrier();  // both mappings exist before anyone stores
  }

  ~IpcTransport() override {
    // Unmap before the owner frees: every rank closes its mappings, then all free together.
    inbox_.reset();
    control_.reset();
    try {
      group_.barrier();
    } catch (...) {
    }
  }

  ProtocolWords words(Protocol p) const override {
    ProtocolWords w = GpuInitiatedTransport::words(p);
    w.timing += "; one MPI rank per GPU, rank 0's figure";
    return w;
  }

 private:
  Group& group_;
  std::unique_ptr<mpi::PeerMapping> inbox_;
  std::unique_ptr<mpi::PeerMapping> control_;
};

// The patterns over CUDA IPC: every rank exports its receive buffer and pattern control words once
// (setup, never timed) and maps those of every other rank, all on one node. The patterns size
// every rank's receive buffer alike, so each mapping is as long as this rank's own.
class IpcPatternTransport final : public PatternTransport {
 public:
  // Collective: every rank of the job trades handles.
  IpcPatternTransport(Context& ctx, std::size_t send_bytes, std::size_t recv_bytes)
      : PatternTransport(ctx.group.rank(), mpi::rank_gpu(ctx.group), send_bytes, recv_bytes, "CUDA IPC mapping"),
        group_(ctx.group) {
    const int rank = ctx.group.rank();
    const auto handles = mpi::exchange_ipc_handles({inbox(), control()}, 2);
    std::vector<RankMemory> ranks(handles.size());
    for (int r = 0; r < static_cast<int>(handles.size()); ++r) {
      if (r == rank) {
        ranks[r] = {static_cast<unsigned char*>(inbox()), inbox_bytes(), static_cast<std::uint64_t*>(control())};
        continue;
      }
      mappings_.push_back(std::make_unique<mpi::PeerMapping>(handles[r][0], mpi::rank_gpu(ctx.group)));
      mappings_.push_back(std::make_unique<mpi::PeerMapping>(handles[r][1], mpi::rank_gpu(ctx.group)));
      ranks[r] = {static_cast<unsigned char*>(mappings_[mappings_.size() - 2]->data()), inbox_bytes(),
                  static_cast<std::uint64_t*>(mappings_.back()->data())};
    }
    start_ranks(std::move(ranks));
    group_.barrier();  // every mapping exists (and every control buffer is zeroed) before anyone stores
  }

  ~IpcPatternTransport() override {
    // Unmap before the owners free: every rank closes its mappings, then all free together.
    mappings_.clear();
    try {
      group_.barrier();
    } catch (...) {
    }
  }

 private:
  Group& group_;
  std::vector<std::unique_ptr<mpi::PeerMapping>> mappings_;
};

// Why the patterns cannot run here: one rank per GPU, every rank on one node (CUDA IPC).
std::optional<std::string> patterns_unavailable(const Context& ctx) {
  if (auto why = mpi::mpi_run_unavailable(ctx)) return why;
  const int gpus = cuda::gpu_count();
  if (gpus == 0) return std::string("no GPU visible (no CUDA device or driver)");
  if (ctx.group.local_size() != ctx.group.size()) return std::string("CUDA IPC needs every rank on one node");
  if (ctx.group.size() > gpus)
    return "needs a GPU per rank (" + std::to_string(ctx.group.size()) + " ranks, " + std::to_string(gpus) +
           " GPUs): ranks sharing a GPU would spin against each other's time slices";
  return std::nullopt;
}

BenchmarkInfo ipc_info(Protocol p) {
  const bool latency = p == Protocol::PingPong;
  return BenchmarkInfo{latency ? "gpu_initiated.ipc.pingpong" : "gpu_initiated.ipc.bandwidth",
                       Category::PointToPoint,
                       "mpi-gpu",
                       latency ? "GPU-initiated ping-pong between ranks 0 and 1 (kernel stores + flag in the peer's "
                                 "IPC-mapped memory), half round trip, per launch mode"
                               : "GPU-initiated one-way messages rank 0 -> rank 1 (streaming stores, a flag per chunk, "
                                 "CUDA IPC), back to back in a persistent kernel",
                       latency ? Metric::Latency : Metric::Bandwidth,
                       RankRange{2, 0},
                       latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30),
                       latency ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                               : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20}};
}

TransportSpec ipc_spec() {
  TransportSpec spec{
      Mechanism::GpuInitiated, "mpi-gpu",
      [](const Context& ctx) -> std::optional<std::string> {
        if (ctx.group.kind() != "mpi") return "needs an MPI job with one rank per GPU (start the engine under mpiexec)";
        const int gpus = cuda::gpu_count();
        if (ctx.group.local_size() < 2) return "ranks 0 and 1 must share a node (CUDA IPC is node-local)";
        if (gpus < 2) return "needs 2 GPUs on the node, found " + std::to_string(gpus);
        if (ctx.group.local_size() > gpus) return "more ranks on the node than GPUs: IPC here pairs one GPU per rank";
        return std::nullopt;
      },
      [](Context& ctx, const Params& params, std::size_t bytes, std::size_t recv_bytes) -> std::unique_ptr<Transport> {
        // The protocols' variants name their launch mode; the patterns' do not (one kernel per
        // exchange, launched and waited for by the host: PatternTransport).
        if (!params.has("launch_mode")) return std::make_unique<IpcPatternTransport>(ctx, bytes, recv_bytes);
        return std::make_unique<IpcTransport>(ctx, launch_mode_from_string(params.text("launch_mode")), bytes);
      },
      {{Protocol::PingPong, ipc_info(Protocol::PingPong)}, {Protocol::Bandwidth, ipc_info(Protocol::Bandwidth)}}};
  spec.variants = [](const Context&, Protocol p) { return link_variants(p == Protocol::PingPong, "cuda_ipc"); };
  spec.movement = [](const Context&, const Params& p, Protocol protocol) {
    return link_movement(protocol == Protocol::PingPong, p, /*ranks=*/true);
  };
  // Halo and neighbour exchange (no collectives: the bucketed allreduce is not offered).
  spec.patterns = PatternSide{"gpu_initiated", true, false, [](const Context& ctx) { return mpi::rank_gpu(ctx.group); },
                              patterns_unavailable};
  return spec;
}

const bool registered = register_transport(ipc_spec());

}  // namespace
}  // namespace commatlas

#endif  // COMMATLAS_HIP
