// CUDA IPC between MPI ranks of one node, one GPU each: every rank exports its receive buffer (and
// a flag) once, maps the other ranks' and copies its messages straight into them with a GPU copy
// initiator (copy/copy_initiator.h): the copy engines (cudaMemcpyAsync) or an SM copy
// kernel.
//   ipc.bandwidth       back-to-back copies 0 -> 1 behind a start-blocking kernel, timed on the
//                       sender's stream (the receiver sits the loop out)
//   ipc.pingpong        copy + flag write into the peer, the peer's GPU spins on the flag and
//                       answers the same way; half the round trip, timed on rank 0's stream
//   pattern.*.ipc       each message copied by the copy engine into the neighbour's buffer, with
//                       zero-byte MPI messages saying "slot free" before and "data there" after
// The receiver checks what landed in its buffer after the timed loop.
#include <map>

#include "copy/copy_initiator.h"
#include "backends/cuda/device_pattern.h"
#include "backends/cuda/event_timing.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/memory.h"
#include "backends/mpi/gpu_message_buffers_mpi.h"
#include "backends/mpi/ipc_exchange_mpi.h"
#include "backends/mpi/mpi_check.h"
#include "core/error.h"
#include "core/sizes.h"
#include "transport/device_arena.h"
#include "transport/ipc_signal.h"
#include "transport/mpi_transport_mpi.h"

namespace commatlas {
namespace {

class IpcTransport final : public OnDeviceArena<Transport> {
 public:
  // The arena's send and receive buffers are the messages' source and the inbox the peers write.
  IpcTransport(Context& ctx, const cuda::CopyInitiator& initiator, const Params& params, int device,
               std::size_t send_bytes, std::size_t recv_bytes)
      : OnDeviceArena(device, send_bytes, recv_bytes),
        group_(ctx.group),
        sm_copy_(initiator.mechanism() == Mechanism::SmCopy),
        rank_(ctx.group.rank()),
        flag_(cuda::MemoryKind::Device, cuda::ipc_block_bytes(sizeof(std::uint64_t)), device),  // exported
        timed_out_(cuda::MemoryKind::Pinned, sizeof(int), device),
        copier_(initiator.device_copier(device, params)) {
    {
      cuda::DeviceScope scope(device);
      COMMATLAS_GPU_CHECK(cudaMemsetAsync(flag_.data(), 0, sizeof(std::uint64_t), arena_.stream().get()));
      *timed_out_.as<int>() = 0;
      arena_.stream().synchronize();
    }
    // Collective: every rank exports its inbox and flag, and maps those of every rank on its node
    // once (setup, never timed). CUDA IPC is node-local: ranks elsewhere are never written to.
    const auto handles = mpi::exchange_ipc_handles({arena_.recv(), flag_.data()}, 2);
    const auto nodes = group_.rank_nodes();
    for (int r = 0; r < static_cast<int>(handles.size()); ++r) {
      if (r == rank_ || nodes[r] != nodes[rank_]) continue;
      inboxes_[r] = std::make_unique<mpi::PeerMapping>(handles[r][0], device);
      flags_[r] = std::make_unique<mpi::PeerMapping>(handles[r][1], device);
    }
    group_.barrier();  // every mapping exists before anyone writes
  }

  ~IpcTransport() override {
    // Unmap first, then free our own buffers only once no other rank maps them any longer.
    inboxes_.clear();
    flags_.clear();
    try {
      group_.barrier();
    } catch (...) {
    }
  }

  TransportClock clock() const override { return TransportClock::Stream; }
  std::string describe() const override {
    return "device buffers of GPU " + std::to_string(arena_.device()) +
           ", each message copied by the copy engine into the neighbour's buffer through CUDA IPC, "
           "zero-byte MPI messages as slot-free and data-there signals";
  }
  bool supports(Protocol p) const override { return p != Protocol::Bibw; }
  double min_sample_s() const override { return cuda::kEventClockMinSampleSeconds; }
  std::vector<int> local_ends() const override {
    if (rank_ == kOriginEnd || rank_ == kPeerEnd) return {rank_};
    return {};
  }
  // The copy into the receiver's memory is the sender's work alone.
  bool times(Protocol p, int end) const override { return p != Protocol::Bandwidth || end == kOriginEnd; }

  ProtocolWords words(Protocol p) const override {
    const std::string copy = sm_copy_ ? "SM copy kernel (16-byte vectors)" : "cudaMemcpyAsync (copy engine)";
    if (p == Protocol::Bandwidth)
      return {"CUDA events on rank 0's stream around back-to-back copies queued behind a start-blocking kernel "
              "(BlockedStart), one MPI rank per GPU",
              "one " + copy + " from rank 0's GPU into rank 1's buffer mapped with cudaIpcOpenMemHandle; "
              "handle exchange excluded"};
    return {"CUDA events on rank 0's stream around a batch of round trips enqueued as they come (Immediate); "
            "per-op time halved; one MPI rank per GPU",
            "half a round trip, GPU to GPU: " + copy + " into the peer's IPC-mapped buffer, a kernel "
            "writing the peer's flag, the peer's GPU spinning on its flag then answering the same way; "
            "kernel launches included, handle exchange excluded"};
  }

  void fill_send(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(arena_.device());
    cuda::fill_pattern_on_device(arena_.send(), bytes, seed, arena_.stream().get());
    arena_.stream().synchronize();
  }
  void poison_recv(int, std::size_t bytes) override {
    cuda::DeviceScope scope(arena_.device());
    cuda::poison_on_device(arena_.recv(), bytes, arena_.stream().get());
    arena_.stream().synchronize();
  }
  std::size_t check_recv(int, std::size_t bytes, std::uint64_t seed) override {
    cuda::DeviceScope scope(arena_.device());
    return cuda::find_mismatch_on_device(arena_.recv(), bytes, seed, arena_.stream().get());
  }

  // Rank 0 sends on odd counts and waits for even ones; rank 1 the other way round. Both ranks
  // run the same number of transfers (the harness broadcasts its counts), so the counters agree.
  void transfer(int from, int to, std::size_t bytes) override {
    const std::uint64_t value = ++sequence_;
    if (rank_ == from) {
      copy_to(to, bytes);
      enqueue_signal(static_cast<std::uint64_t*>(flags_.at(to)->data()), value, arena_.stream().get());
    } else if (rank_ == to) {
      enqueue_wait(flag_.as<std::uint64_t>(), value, static_cast<int*>(timed_out_.device_view()), arena_.stream().get());
    }
  }
  void window(int from, int to, std::size_t bytes) override {
    if (rank_ == from) copy_to(to, bytes);
  }

  void time(Protocol p, std::int64_t samples, std::int64_t ops, std::vector<double>& seconds,
            const std::function<void()>& op) override {
    cuda::time_event_samples(
        {&arena_.stream()}, samples, ops, seconds, [&](std::size_t) { op(); },
        p == Protocol::PingPong ? cuda::LaunchMode::Immediate : cuda::LaunchMode::BlockedStart);
  }
  void check_run() override {
    if (*timed_out_.as<volatile int>() != 0)
      throw MeasurementError("rank " + std::to_string(rank_) + " waited more than 10 s for its peer's IPC flag");
  }

  void* send_home() override { return arena_.send(); }
  void* recv_home() override { return arena_.recv(); }

  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    // The receiver says its slot is free (it has unpacked the previous step) ...
    signal(recvs, sends, 0);
    const auto* src = static_cast<const unsigned char*>(arena_.send());
    cuda::DeviceScope scope(arena_.device());
    for (const PeerMessage& m : sends) {
      auto* dst = static_cast<unsigned char*>(m.peer == rank_ ? arena_.recv() : inboxes_.at(m.peer)->data());
      if (m.bytes)
        COMMATLAS_GPU_CHECK(cudaMemcpyAsync(dst + m.remote_offset, src + m.offset, m.bytes, cudaMemcpyDeviceToDevice,
                                            arena_.stream().get()));
    }
    arena_.stream().synchronize();
    // ... and the sender, once its copies are done, that the data is there.
    signal(sends, recvs, kDoneTag);
  }
  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override {
    mpi_exchange_counts(comm_.get(), requests_, sends, send_counts, recvs, recv_counts);
  }

 private:
  static constexpr int kDoneTag = 64;

  void copy_to(int to, std::size_t bytes) { copier_->enqueue(inboxes_.at(to)->data(), arena_.send(), bytes, arena_.stream()); }

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

  Group& group_;
  bool sm_copy_;  // the record's words for the copy
  int rank_;
  cuda::GpuBuffer flag_;       // the counter the peer bumps after its copy
  cuda::GpuBuffer timed_out_;  // where this rank's wait kernels report a timeout
  std::unique_ptr<cuda::DeviceCopier> copier_;
  mpi::MpiComm comm_;
  std::vector<MPI_Request> requests_;
  std::map<int, std::unique_ptr<mpi::PeerMapping>> inboxes_;
  std::map<int, std::unique_ptr<mpi::PeerMapping>> flags_;
  std::uint64_t sequence_ = 0;
};

// The copy initiators this transport measures, by name (params "engine"), and their mechanisms.
const std::vector<std::pair<std::string, Mechanism>>& ipc_initiators() {
  static const std::vector<std::pair<std::string, Mechanism>> all{{"ce", Mechanism::CudaIpcCe},
                                                                  {"sm", Mechanism::CudaIpcSm}};
  return all;
}

BenchmarkInfo ipc_info(Protocol p) {
  const bool latency = p == Protocol::PingPong;
  BenchmarkInfo i{latency ? "ipc.pingpong" : "ipc.bandwidth", Category::PointToPoint, "mpi-gpu",
                  latency ? "CUDA IPC ping-pong between ranks 0 and 1 (copy + flag in peer memory), half round trip"
                          : "CUDA IPC copy from rank 0's GPU straight into rank 1's buffer, back to back",
                  latency ? Metric::Latency : Metric::Bandwidth, RankRange{2, 0}, {}, {8, 1ull << 20, 256ull << 20}};
  i.default_sizes = latency ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 4ull << 30);
  if (latency) i.quick_sizes = {8, 4096, 1ull << 20};
  return i;
}

TransportSpec ipc_spec() {
  TransportSpec spec{
      Mechanism::CudaIpcCe, "mpi-gpu",
      [](const Context& ctx) -> std::optional<std::string> {
        if (ctx.group.kind() != "mpi") return "needs an MPI job with one rank per GPU (start the engine under mpiexec)";
        const int gpus = cuda::gpu_count();
        if (ctx.group.local_size() < 2) return "ranks 0 and 1 must share a node (CUDA IPC is node-local)";
        if (test_share_gpu() && gpus >= 1) return std::nullopt;  // ranks share GPUs (device = local rank % GPUs)
        if (gpus < 2) return "needs 2 GPUs on the node, found " + std::to_string(gpus);
        if (ctx.group.local_size() > gpus) return "more ranks on the node than GPUs: IPC here pairs one GPU per rank";
        return std::nullopt;
      },
      [](Context& ctx, const Params& params, std::size_t s, std::size_t r) -> std::unique_ptr<Transport> {
        const std::string name = params.has("engine") ? params.text("engine") : "ce";
        const cuda::InitiatorPtr initiator = cuda::CopyInitiators::instance().find(name);
        if (!initiator) throw UsageError("engine=" + name + ": no such GPU copy initiator (ce, sm)");
        return std::make_unique<IpcTransport>(ctx, *initiator, params, ctx.group.local_rank() % cuda::gpu_count(), s,
                                              r);
      },
      {{Protocol::Bandwidth, ipc_info(Protocol::Bandwidth)}, {Protocol::PingPong, ipc_info(Protocol::PingPong)}}};
  spec.variants = [](const Context&, Protocol p) {
    std::vector<Params> out;
    for (const auto& [name, mechanism] : ipc_initiators())
      out.push_back(Params{{"engine", name},
                           {"gpus", std::string(test_share_gpu() && cuda::gpu_count() < 2 ? "0,0" : "0,1")},
                           {"direction", std::string(p2p_direction(p))}});
    return out;
  };
  // Device buffers of ranks 0 and 1; a one-way copy into the peer's buffer is the send of this
  // mechanism, so it competes with MPI and NCCL sends between the same GPUs.
  spec.movement = [](const Context&, const Params& p, Protocol protocol) {
    Mechanism mechanism = Mechanism::CudaIpcCe;
    for (const auto& [name, m] : ipc_initiators())
      if (p.has("engine") && p.text("engine") == name) mechanism = m;
    return p2p_movement(protocol, mechanism, gpu_memory(gpu_of_rank(p, 0), Allocator::Device),
                        gpu_memory(gpu_of_rank(p, 1), Allocator::Device));
  };
  spec.patterns = PatternSide{"ipc", true, false, [](const Context& ctx) { return mpi::rank_gpu(ctx.group); },
                              [](const Context& ctx) -> std::optional<std::string> {
                                if (auto why = mpi::mpi_run_unavailable(ctx)) return why;
                                if (cuda::gpu_count() == 0)
                                  return std::string("no GPU visible (no CUDA device or driver)");
                                if (ctx.group.local_size() != ctx.group.size())
                                  return std::string("CUDA IPC needs every rank on one node");
                                return std::nullopt;
                              }};
  return spec;
}

const bool registered = register_transport(ipc_spec());

}  // namespace
}  // namespace commatlas
