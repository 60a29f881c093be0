// mpi.pingpong: osu_latency on host buffers.
#include "backends/mpi/point_to_point.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class MpiPingPong final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"mpi.pingpong", Category::PointToPoint, "mpi",
            "MPI_Send/MPI_Recv ping-pong between ranks 0 and 1 on host buffers, half round trip (osu_latency)",
            Metric::Latency, RankRange{2, 0}, {1, 64, 4096, 64ull << 10, 1ull << 20}, {8, 4096}};  // the sizes the OSU comparison uses
  }
  std::optional<std::string> unavailable(const Context& ctx) const override { return mpi_run_unavailable(ctx); }
  std::vector<Params> variants(const Context&) const override {
    return {Params{{"direction", std::string(p2p_direction(P2pProtocol::PingPong))}}};
  }
  Movement movement(const Context&, const Params&) const override { return p2p_host_movement(P2pProtocol::PingPong); }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return prepare_p2p_workload(ctx, {P2pProtocol::PingPong, MessageMemory::Host}, bytes);
  }
};

COMMATLAS_REGISTER_BENCHMARK(MpiPingPong);

}  // namespace
}  // namespace commatlas
