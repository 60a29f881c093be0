#include "collective/collective_nccl.h"

#include <stdexcept>

#include "backends/cuda/event_timing.h"
#include "backends/cuda/gpu_collective_data.h"
#include "backends/nccl/nccl_check.h"
#include "backends/nccl/nccl_job.h"
#include "core/all_ranks.h"
#include "core/error.h"
#include "core/sizes.h"

namespace commatlas::nccl {
namespace {

struct RankBuffers {
  cuda::GpuBuffer send;
  cuda::GpuBuffer recv;
};

class NcclCollectiveWorkload final : public Workload {
 public:
  NcclCollectiveWorkload(const NcclTeam& team, Context& ctx, const NcclCollectiveDef& def, CollectiveShape shape,
                         NcclTiming timing)
      : team_(team), def_(def), shape_(shape), allocated_(shape), timing_(timing), seed_(ctx.options.seed) {
    buffers_ = make_on_all_ranks(ctx.group, [&] {
      std::vector<std::unique_ptr<RankBuffers>> made;
      for (const auto& m : team_.members())
        made.push_back(std::make_unique<RankBuffers>(
            RankBuffers{cuda::GpuBuffer(cuda::MemoryKind::Device, shape_.send_elements * sizeof(float), m->device),
                        cuda::GpuBuffer(cuda::MemoryKind::Device, shape_.recv_elements * sizeof(float), m->device)}));
      return made;
    });
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const NcclMember& m = *team_.members()[i];
      cuda::DeviceScope scope(m.device);
      cuda::fill_collective_input(buffers_[i]->send.as<float>(), shape_.send_elements, seed_, m.rank, m.stream.get());
    }
    connect_and_poison();
  }

  // Inside the buffers of the largest size: each input element is a function of its rank and
  // index (gpu_collective_data.h), so the buffer's prefix is the smaller size's input. The shape
  // depends on the size and the team's rank count alone, so every rank answers alike before any
  // of them makes the NCCL call in connect_and_poison().
  bool resize(std::uint64_t bytes) override {
    const auto shape = collective_shape(def_.op, bytes, team_.ranks(), sizeof(float));
    if (!shape || shape->send_elements > allocated_.send_elements || shape->recv_elements > allocated_.recv_elements)
      return false;  // no shape: prepare() says why (Skip)
    shape_ = *shape;
    connect_and_poison();
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    a.min_sample_s = cuda::kEventClockMinSampleSeconds;
    a.bytes_per_op = static_cast<double>(shape_.counted_bytes);
    if (timing_ == NcclTiming::Harness) {
      a.timing = "CUDA events on every rank's stream around a batch of back-to-back " + to_string(def_.op) +
                 " calls queued behind a start-blocking kernel (BlockedStart: no launch gaps); per iteration the "
                 "slowest rank's time; " + launch_words(team_.launch());
      a.latency_includes = "one ncclGroupStart/" + to_string(def_.op) + "/ncclGroupEnd over " +
                           std::to_string(team_.ranks()) + " GPUs, GPU time back-to-back (launch cost hidden), float sum";
    } else {
      a.timing = "bare loop as nccl-tests: one CUDA event pair around " + std::to_string(kBareIterations) + " " +
                 to_string(def_.op) + " calls enqueued as they come (no start-blocking kernel, no harness batching); "
                 "per sample the slowest rank's time; " + launch_words(team_.launch());
      a.latency_includes = "one ncclGroupStart/" + to_string(def_.op) + "/ncclGroupEnd over " +
                           std::to_string(team_.ranks()) + " GPUs in a pipelined loop (launches overlap the previous call)";
      a.one_op_per_sample = true;
    }
    a.max_over_ranks = true;
    a.collective = CollectiveAccounting{to_string(def_.op), bus_factor(def_.op, team_.ranks())};
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE)
    const auto one_op = [&] {
      if (move) team_.enqueue_phase([&](const NcclMember& m) { enqueue_for(m); });
    };
    const auto streams = team_.streams();
    if (timing_ == NcclTiming::BareLoop) {
      if (streams.size() != 1) throw MeasurementError("the bare reference loop times one GPU per process");
      return bare_.time(*streams[0], samples, seconds, one_op);
    }
    cuda::time_event_samples(streams, samples, ops, seconds, [&](std::size_t s) {
      // One call per op enqueues the whole group: NCCL needs every GPU of this process in it.
      if (s + 1 == streams.size()) one_op();
    });
  }

  std::optional<double> host_enqueue_s() const override { return bare_.host_enqueue_s(); }

  Verification verify() override {
    std::uint64_t checked = 0;
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const NcclMember& m = *team_.members()[i];
      const cuda::CollectiveExpectation e = expectation(m.rank);
      if (!cuda::rank_has_output(e)) continue;
      cuda::DeviceScope scope(m.device);
      const std::uint64_t bad =
          cuda::find_collective_mismatch(buffers_[i]->recv.as<float>(), shape_.recv_elements, e, m.stream.get());
      checked += shape_.recv_elements * sizeof(float);
      if (bad != shape_.recv_elements)
        return {false, checked, to_string(def_.op) + " output element " + std::to_string(bad) + " of " +
                                    std::to_string(shape_.recv_elements) + " on NCCL rank " + std::to_string(m.rank) +
                                    " (GPU " + std::to_string(m.device) + ") differs from the expected value"};
    }
    return {true, checked, ""};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  // On each member's own stream, so its next collective call is ordered after the poison.
  void prepare_batch() override {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      cuda::DeviceScope scope(team_.members()[i]->device);
      poison_output(i);
      team_.members()[i]->stream.synchronize();
    }
  }

  // NCCL connects peers on first use of an algorithm, and a smaller size may pick another one:
  // let that happen here, untimed and without a start-blocking kernel ahead of it (setup may wait
  // on the device). Then poison the output, so only the timed calls can make it right.
  void connect_and_poison() {
    team_.enqueue_phase([&](const NcclMember& m) { enqueue_for(m); });
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const NcclMember& m = *team_.members()[i];
      m.stream.synchronize();
      poison_output(i);
      m.stream.synchronize();
    }
  }

  cuda::CollectiveExpectation expectation(int rank) const {
    return {def_.op, seed_, rank, team_.ranks(), kCollectiveRoot, shape_.chunk_elements};
  }

  void poison_output(std::size_t i) {
    const NcclMember& m = *team_.members()[i];
    // The shape's output, not the allocation: after a resize it is a prefix of it.
    COMMATLAS_GPU_CHECK(cudaMemsetAsync(buffers_[i]->recv.data(), 0xFF, shape_.recv_elements * sizeof(float), m.stream.get()));
  }

  void enqueue_for(const NcclMember& m) {
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      if (team_.members()[i].get() == &m)
        def_.enqueue({m, buffers_[i]->send.as<float>(), buffers_[i]->recv.as<float>(), shape_, team_.ranks()});
  }

  const NcclTeam& team_;
  const NcclCollectiveDef& def_;
  CollectiveShape shape_;
  CollectiveShape allocated_;  // the shape the buffers were made for
  NcclTiming timing_;
  BareLoop bare_;  // the clock of NcclTiming::BareLoop
  std::uint64_t seed_;
  std::vector<std::unique_ptr<RankBuffers>> buffers_;
};

}  // namespace

std::unique_ptr<Workload> prepare_nccl_collective(const NcclTeam& team, Context& ctx, const NcclCollectiveDef& def,
                                                  std::uint64_t bytes, NcclTiming timing) {
  const auto shape = collective_shape(def.op, bytes, team.ranks(), sizeof(float));
  if (!shape)
    throw Skip(format_size(bytes) + " holds no whole float block per rank for " + to_string(def.op) + " over " +
               std::to_string(team.ranks()) + " ranks");
  return std::make_unique<NcclCollectiveWorkload>(team, ctx, def, *shape, timing);
}

const std::vector<NcclCollectiveDef>& nccl_collectives() {
  static const std::vector<NcclCollectiveDef> defs = {
      {CollectiveOp::AllReduce,
       [](const NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclAllReduce(c.send, c.recv, c.shape.send_elements, ncclFloat, ncclSum, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::AllGather,
       [](const NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclAllGather(c.send, c.recv, c.shape.send_elements, ncclFloat, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::ReduceScatter,
       [](const NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclReduceScatter(c.send, c.recv, c.shape.recv_elements, ncclFloat, ncclSum, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::AllToAll,
       // Grouped send/recv, one block to and from every rank (nccl-tests' alltoall).
       [](const NcclCollectiveCall& c) {
         const std::size_t block = c.shape.chunk_elements;
         for (int peer = 0; peer < c.ranks; ++peer) {
           COMMATLAS_NCCL(ncclSend(c.send + peer * block, block, ncclFloat, peer, c.member.comm.get(), c.member.stream.get()));
           COMMATLAS_NCCL(ncclRecv(c.recv + peer * block, block, ncclFloat, peer, c.member.comm.get(), c.member.stream.get()));
         }
       }},
      {CollectiveOp::Broadcast,
       [](const NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclBroadcast(c.send, c.recv, c.shape.send_elements, ncclFloat, kCollectiveRoot, c.member.comm.get(), c.member.stream.get()));
       }},
      {CollectiveOp::Reduce,
       [](const NcclCollectiveCall& c) {
         COMMATLAS_NCCL(ncclReduce(c.send, c.recv, c.shape.send_elements, ncclFloat, ncclSum, kCollectiveRoot, c.member.comm.get(), c.member.stream.get()));
       }},
  };
  return defs;
}

const NcclCollectiveDef& find_nccl_collective(CollectiveOp op) {
  for (const NcclCollectiveDef& def : nccl_collectives())
    if (def.op == op) return def;
  throw std::logic_error("no NCCL collective " + to_string(op));
}

}  // namespace commatlas::nccl
