// NCCL, one MPI rank per GPU: the messages of a step as ncclSend/ncclRecv inside one NCCL group,
// the counts of the irregular exchange the same way (then copied to the host, where the
// application sizes its receives), buckets as ncclAllReduce enqueued back to back.
#include <algorithm>

#include "backends/mpi/point_to_point.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_comm.h"
#include "benchmarks/pattern/device_arena.h"
#include "benchmarks/pattern/mechanism.h"
#include "core/error.h"

namespace commatlas {
namespace {

// NCCL has no tags: messages between two ranks match in the order they are issued. Ordering both
// sides by tag pairs each send with its receive (two faces can go to the same rank).
std::vector<PeerMessage> by_tag(std::vector<PeerMessage> messages) {
  std::stable_sort(messages.begin(), messages.end(), [](const PeerMessage& a, const PeerMessage& b) { return a.tag < b.tag; });
  return messages;
}

class NcclMechanism final : public OnDeviceArena<PatternMechanism> {
 public:
  NcclMechanism(const NcclMember& member, std::size_t send_bytes, std::size_t recv_bytes)
      : OnDeviceArena(member.device, send_bytes, recv_bytes), member_(member),
        counts_(static_cast<std::uint64_t*>(arena_.allocate(2 * kMaxPeers * 8))) {}

  std::string describe() const override {
    return "device buffers of GPU " + std::to_string(arena_.device()) + ", NCCL (one MPI rank per GPU)";
  }

  void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) override {
    grouped(static_cast<const unsigned char*>(arena_.send()), static_cast<unsigned char*>(arena_.recv()), by_tag(sends),
            by_tag(recvs));
    member_.stream.synchronize();
  }

  void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                       const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) override {
    if (sends.size() > kMaxPeers || recvs.size() > kMaxPeers) throw MeasurementError("more neighbours than NCCL count slots");
    std::vector<PeerMessage> s = sends, r = recvs;
    for (std::size_t i = 0; i < s.size(); ++i) s[i].offset = i * 8, s[i].bytes = 8;
    for (std::size_t i = 0; i < r.size(); ++i) r[i].offset = (kMaxPeers + i) * 8, r[i].bytes = 8;
    DeviceScope scope(member_.device);
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(counts_, send_counts.data(), s.size() * 8, cudaMemcpyHostToDevice, member_.stream.get()));
    auto* base = reinterpret_cast<unsigned char*>(counts_);
    grouped(base, base, by_tag(s), by_tag(r));
    COMMATLAS_GPU_CHECK(cudaMemcpyAsync(recv_counts.data(), counts_ + kMaxPeers, r.size() * 8, cudaMemcpyDeviceToHost,
                                        member_.stream.get()));
    member_.stream.synchronize();
  }

  void allreduce(const float* send, float* recv, std::size_t count) override {
    DeviceScope scope(member_.device);
    COMMATLAS_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, member_.comm.get(), member_.stream.get()));
  }
  void finish() override { member_.stream.synchronize(); }

 private:
  static constexpr std::size_t kMaxPeers = 32;
  void grouped(const unsigned char* send, unsigned char* recv, const std::vector<PeerMessage>& sends,
               const std::vector<PeerMessage>& recvs) {
    DeviceScope scope(member_.device);
    COMMATLAS_NCCL(ncclGroupStart());
    for (const PeerMessage& m : recvs)
      COMMATLAS_NCCL(ncclRecv(recv + m.offset, m.bytes, ncclUint8, m.peer, member_.comm.get(), member_.stream.get()));
    for (const PeerMessage& m : sends)
      COMMATLAS_NCCL(ncclSend(send + m.offset, m.bytes, ncclUint8, m.peer, member_.comm.get(), member_.stream.get()));
    COMMATLAS_NCCL(ncclGroupEnd());
  }
  const NcclMember& member_;
  std::uint64_t* counts_;
};

const bool registered = register_pattern_benchmarks(MechanismSpec{
    Mechanism::Nccl, "nccl", "mpi-gpu", true, true,
    [](const Context& ctx) { return nccl_unavailable(NcclLaunch::RankPerProcess, ctx, 2); },
    [](const Context& ctx) { return ctx.group.local_rank() % std::max(gpu_count(), 1); },
    [](Context& ctx, std::size_t s, std::size_t r) -> std::unique_ptr<PatternMechanism> {
      const NcclTeam& team = nccl_team(NcclLaunch::RankPerProcess, ctx);
      return std::make_unique<NcclMechanism>(*team.members().front(), s, r);
    }});

}  // namespace
}  // namespace commatlas
