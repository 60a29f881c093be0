// mpi.bibw: osu_bibw on host buffers; the figure is the sum of both directions.
#include "backends/mpi/point_to_point.h"
#include "core/registry.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

class MpiBidirectionalBandwidth final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"mpi.bibw", Category::PointToPoint, "mpi",
            "windows of 64 messages each way between ranks 0 and 1 at once on host buffers, sum of both (osu_bibw)",
            Metric::Bandwidth, RankRange{2, 0}, {1, 64, 4096, 64ull << 10, 1ull << 20, 16ull << 20}, {4096, 1ull << 20}};
  }
  std::optional<std::string> unavailable(const Context& ctx) const override { return mpi_run_unavailable(ctx); }
  std::vector<Params> variants(const Context&) const override {
    return {Params{{"direction", std::string(p2p_direction(P2pProtocol::Bidirectional))}}};
  }
  Movement movement(const Context&, const Params&) const override { return p2p_host_movement(P2pProtocol::Bidirectional); }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params&, std::uint64_t bytes) const override {
    return prepare_p2p_workload(ctx, {P2pProtocol::Bidirectional, MessageMemory::Host}, bytes);
  }
};

COMMATLAS_REGISTER_BENCHMARK(MpiBidirectionalBandwidth);

}  // namespace
}  // namespace commatlas
