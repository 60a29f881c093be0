// reference.mpi_pingpong: the bare osu_latency loop, to check mpi.pingpong against.
//
// No MessageBuffers, no per-op callback, no batching by the harness: each sample is one
// MPI_Wtime pair around a fixed number of MPI_Send/MPI_Recv round trips, exactly as osu_latency
// times them. mpi.pingpong's 8-byte latency should lie within a few percent of this one in the
// same run; a larger gap is overhead of our own protocol code or harness.
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "backends/mpi/mpi_check.h"
#include "backends/mpi/mpi_comm.h"
#include "core/error.h"
#include "core/pattern.h"
#include "core/registry.h"
#include "transport/transport.h"

namespace commatlas {
namespace {

// Round trips per MPI_Wtime pair: about a millisecond at shared-memory latencies, long enough
// that the two clock reads vanish, short enough that a preempted sample stays an outlier.
constexpr int kRoundTrips = 1000;
constexpr int kTag = 1;

class BarePingPong final : public Workload {
 public:
  BarePingPong(std::size_t bytes, std::uint64_t seed)
      : send_(bytes), recv_(bytes), seed_(seed) {
    if (active()) fill_pattern(send_.data(), bytes, sender_seed(comm_.rank()));
  }

  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(send_.size());
    a.timing = "MPI_Wtime on rank 0 around " + std::to_string(kRoundTrips) +
               " round trips per sample (osu_latency loop), divided by 2 x " + std::to_string(kRoundTrips);
    a.latency_includes = "half a round trip: bare MPI_Send + MPI_Recv loop on host std::vector buffers";
    a.one_op_per_sample = true;  // a sample is already a loop of its own
    return a;
  }

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (!active()) return;
    // The harness sized `samples` x `ops` in operations of one half round trip (what each value
    // appended here stands for); one sample here is 2 x kRoundTrips of them, so run that many
    // fewer samples to stay within the time budget. Both ranks compute the same count.
    samples = std::max<std::int64_t>(1, (samples * ops + 2 * kRoundTrips - 1) / (2 * kRoundTrips));
    const bool move = !planted_no_move();  // test-only: COMMATLAS_TEST_SKIP_MOVE, same on both ranks
    const int n = static_cast<int>(send_.size());
    const int peer = 1 - comm_.rank();
    for (std::int64_t s = 0; s < samples; ++s) {
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kRoundTrips && move; ++i) {
        if (comm_.rank() == 0) {
          COMMATLAS_MPI(MPI_Send(send_.data(), n, MPI_BYTE, peer, kTag, comm_.get()));
          COMMATLAS_MPI(MPI_Recv(recv_.data(), n, MPI_BYTE, peer, kTag, comm_.get(), MPI_STATUS_IGNORE));
        } else {
          COMMATLAS_MPI(MPI_Recv(recv_.data(), n, MPI_BYTE, peer, kTag, comm_.get(), MPI_STATUS_IGNORE));
          COMMATLAS_MPI(MPI_Send(send_.data(), n, MPI_BYTE, peer, kTag, comm_.get()));
        }
      }
      seconds.push_back((MPI_Wtime() - t0) / (2.0 * kRoundTrips));
    }
  }

  Verification verify() override {
    if (!active()) return {true, 0, ""};
    const std::size_t bad = find_pattern_mismatch(recv_.data(), recv_.size(), sender_seed(1 - comm_.rank()));
    if (bad == recv_.size()) return {true, recv_.size(), ""};
    return {false, recv_.size(), "byte " + std::to_string(bad) + " differs from what the peer sent"};
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

 private:
  void prepare_batch() override { std::fill(recv_.begin(), recv_.end(), 0xFF); }
  bool active() const { return comm_.rank() < 2; }
  std::uint64_t sender_seed(int rank) const { return seed_ * 7919 + static_cast<std::uint64_t>(rank) + 1; }

  mpi::MpiComm comm_;
  std::vector<unsigned char> send_;
  std::vector<unsigned char> recv_;
  std::uint64_t seed_;
};

class ReferenceMpiPingPong final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"reference.mpi_pingpong", Category::Reference, "mpi",
            "bare osu_latency loop (one MPI_Wtime pair around 1000 round trips) to check mpi.pingpong against",
            Metric::Latency, RankRange{2, 0}, {1, 64ull << 10}, {8}};  // sizes mpi.pingpong has
  }
  std::optional<std::string> unavailable(const Context& ctx) const override { return mpi::mpi_run_unavailable(ctx); }
  Movement movement(const Context&, const Params&) const override {
    Movement m = p2p_movement(Protocol::PingPong, Mechanism::MpiHost, host_memory(std::nullopt, Allocator::Pageable),
                              host_memory(std::nullopt, Allocator::Pageable));
    m.reference_of = "mpi.pingpong";
    return m;
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    if (bytes > (1u << 20)) throw Skip("the reference ping-pong is meant for small messages (at most 1 MiB)");
    return std::make_unique<BarePingPong>(static_cast<std::size_t>(bytes), ctx.options.seed);
  }
};

COMMATLAS_REGISTER_BENCHMARK(ReferenceMpiPingPong);

}  // namespace
}  // namespace commatlas
