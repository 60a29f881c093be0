// mpi.bandwidth: osu_bw on host buffers.
#include "backends/mpi/point_to_point.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class MpiBandwidth final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"mpi.bandwidth", Category::PointToPoint, "mpi",
            "windows of 64 MPI_Isend rank 0 -> 1 on host buffers, acked (osu_bw)", Metric::Bandwidth,
            RankRange{2, 0}, {1, 64, 4096, 64ull << 10, 1ull << 20, 16ull << 20}, {4096, 1ull << 20}};
  }
  std::optional<std::string> unavailable(const Context& ctx) const override { return mpi_run_unavailable(ctx); }
  std::vector<Params> variants(const Context&) const override {
    return {Params{{"direction", std::string(p2p_direction(P2pProtocol::Unidirectional))}}};
  }
  Movement movement(const Context&, const Params&) const override { return p2p_host_movement(P2pProtocol::Unidirectional); }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return prepare_p2p_workload(ctx, {P2pProtocol::Unidirectional, MessageMemory::Host}, bytes);
  }
};

COMMATLAS_REGISTER_BENCHMARK(MpiBandwidth);

}  // namespace
}  // namespace commatlas
