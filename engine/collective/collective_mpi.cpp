#include "collective/collective_mpi.h"

#include <climits>
#include <cstring>

#include "backends/mpi/mpi_check.h"
#include "backends/mpi/mpi_comm.h"
#include "core/all_ranks.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas::mpi {
namespace {

class CollectiveWorkload final : public Workload {
 public:
  CollectiveWorkload(Context& ctx, const CollectiveDefinition& definition, const MessageBufferMaker& make,
                     const CollectiveShape& shape)
      : definition_(definition), shape_(shape), allocated_(shape.counted_bytes) {
    layout_ = layout_of(shape);
    buffers_ = make_on_all_ranks(ctx.group, [&] { return make(sizes_of(layout_)); });
    unsigned char* send = buffers_->send_view();
    for (std::size_t i = 0; i < layout_.send_elements; ++i) {
      const CollectiveElement v = collective_source_value(comm_.rank(), i);
      std::memcpy(send + i * kCollectiveElementBytes, &v, kCollectiveElementBytes);
    }
    buffers_->publish_send();
  }

  // The shape and this rank's layout again for `bytes`, inside the buffers of the largest size.
  // Each send element is a function of its rank and index only (collective_source_value), so the
  // buffer's prefix is already the smaller size's source; MessageBuffers::resize poisons the
  // receive side. Shapes depend on the size and the rank count alone: every rank answers alike.
  bool resize(std::uint64_t bytes) override {
    const auto shape = collective_shape(definition_.op, bytes, comm_.size(), kCollectiveElementBytes);
    if (!shape || shape->counted_bytes > allocated_) return false;  // no shape: prepare() says why (Skip)
    const CollectiveLayout layout = layout_of(*shape);
    if (!buffers_->resize(sizes_of(layout))) return false;
    shape_ = *shape;
    layout_ = layout;
    return true;
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(shape_.counted_bytes);
    a.buffer_bytes = a.bytes_per_op;
    a.timing = "host steady_clock around one " + definition_.mpi_call +
               " per sample, each after an MPI_Barrier; per sample the slowest rank's time";
    a.latency_includes = "one " + definition_.mpi_call + " on " + std::to_string(comm_.size()) +
                         " ranks from the barrier's exit to the call's return on the slowest rank, " + buffers_->describe();
    // The operation is done only when its last rank is; a fast rank's time says nothing about it.
    a.max_over_ranks = true;
    // One call per sample: the barrier that lines the ranks up must stay outside the timed region.
    a.one_op_per_sample = true;
    a.collective = CollectiveAccounting{to_string(definition_.op), bus_factor(definition_.op, comm_.size())};
    a.copy_level_witness = buffers_->memory() != MessageMemory::Host;
    return a;
  }

  std::optional<double> copy_level_us() override { return buffers_->copy_level_us(); }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    const CollectiveCall call{buffers_->send_data(), buffers_->recv_data(), shape_, comm_.size(), comm_.rank(), comm_.get()};
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE, same on every rank
    for (std::int64_t s = 0; s < samples; ++s) {
      comm_.barrier();
      time_host_samples(1, ops, seconds, [&] {
        buffers_->stage_before_send();
        if (move) definition_.run(call);
        buffers_->stage_after_receive();
      });
    }
  }

  Verification verify() override {
    const unsigned char* recv = buffers_->fetch_recv();
    for (std::size_t j = 0; j < layout_.recv_elements; ++j) {
      CollectiveElement got;
      std::memcpy(&got, recv + j * kCollectiveElementBytes, kCollectiveElementBytes);
      const double want = definition_.expected(j, shape_, comm_.size(), comm_.rank());
      if (static_cast<double>(got) != want)
        return {false, layout_.recv_elements * kCollectiveElementBytes,
                to_string(definition_.op) + " element " + std::to_string(j) + " of " + std::to_string(layout_.recv_elements) +
                    " is " + std::to_string(got) + ", expected " + std::to_string(want)};
    }
    return {true, layout_.recv_elements * kCollectiveElementBytes, ""};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  // Staged buffers poison their host staging copy too (MessageBuffers::poison_recv).
  void prepare_batch() override { buffers_->poison_recv(); }

  CollectiveLayout layout_of(const CollectiveShape& shape) const {
    return definition_.layout ? definition_.layout(shape, comm_.rank())
                              : CollectiveLayout{static_cast<std::size_t>(shape.send_elements),
                                                 static_cast<std::size_t>(shape.recv_elements)};
  }
  static MessageSizes sizes_of(const CollectiveLayout& layout) {
    return {layout.send_elements * kCollectiveElementBytes, layout.recv_elements * kCollectiveElementBytes};
  }

  const CollectiveDefinition& definition_;
  CollectiveShape shape_;
  std::uint64_t allocated_;  // counted bytes of the shape the buffers were made for
  MpiComm comm_;
  CollectiveLayout layout_;
  std::unique_ptr<MessageBuffers> buffers_;
};

std::vector<std::uint64_t> default_collective_sizes() {
  return transfer_sizes(8, 16ull << 20);  // latency-bound to bandwidth-bound, on NCCL's sizes
}

}  // namespace

CollectiveElement collective_source_value(int rank, std::size_t i) {
  return static_cast<CollectiveElement>((i * 7 + static_cast<std::size_t>(rank) * 131) % 1021);
}

std::vector<const CollectiveDefinition*>& mpi_collectives() {
  static std::vector<const CollectiveDefinition*> all;
  return all;
}

const CollectiveDefinition* find_mpi_collective(CollectiveOp op) {
  for (const CollectiveDefinition* d : mpi_collectives())
    if (d->op == op) return d;
  return nullptr;
}

bool register_mpi_collective(const CollectiveDefinition& definition) {
  mpi_collectives().push_back(&definition);
  return Registry::instance().add(std::make_unique<MpiCollectiveBenchmark>(definition, MessageMemory::Host));
}

BenchmarkInfo MpiCollectiveBenchmark::info() const {
  return {"mpi." + to_string(definition_.op), Category::Collective, "mpi",
          definition_.mpi_call + " over all ranks on " + to_string(memory_) + " buffers, slowest rank per iteration",
          Metric::Bandwidth, RankRange{2, 0}, default_collective_sizes(), {8, 64ull << 10, 4ull << 20}};
}

std::optional<std::string> MpiCollectiveBenchmark::unavailable(const Context& ctx) const { return mpi_run_unavailable(ctx); }

Movement MpiCollectiveBenchmark::movement(const Context& ctx, const Params&) const {
  return collective_movement(definition_.op, Mechanism::MpiHost, host_memory(std::nullopt, Allocator::Pageable),
                             ctx.group.size());
}

std::unique_ptr<Workload> MpiCollectiveBenchmark::prepare(Context& ctx, const Params&, std::uint64_t bytes) const {
  const MessageMemory memory = memory_;
  return prepare_collective_workload(
      ctx, definition_, [memory](MessageSizes sizes) { return make_message_buffers(memory, sizes); }, bytes);
}

std::unique_ptr<Workload> prepare_collective_workload(Context& ctx, const CollectiveDefinition& definition,
                                                      const MessageBufferMaker& make, std::uint64_t bytes) {
  const int ranks = ctx.group.size();
  const auto shape = collective_shape(definition.op, bytes, ranks, kCollectiveElementBytes);
  if (!shape)
    throw Skip(format_size(bytes) + " holds less than one " + std::to_string(kCollectiveElementBytes) +
               "-byte element per rank block on " + std::to_string(ranks) + " ranks");
  if (shape->send_elements > static_cast<std::uint64_t>(INT_MAX) || shape->recv_elements > static_cast<std::uint64_t>(INT_MAX))
    throw Skip(format_size(bytes) + " needs more elements than an MPI int count holds");
  return std::make_unique<CollectiveWorkload>(ctx, definition, make, *shape);
}

}  // namespace commatlas::mpi
