// The point-to-point benchmarks: for every transport registered (transport/transport.h), the
// protocols its registration offers (TransportSpec::protocols: ping-pong, bandwidth, bibw), each
// the one workload of transport/protocol_workload.h over that transport.
#include "core/error.h"
#include "core/registry.h"
#include "transport/protocol_workload.h"
#include "transport/transport.h"

namespace commatlas {
namespace {

class ProtocolBenchmarkOf final : public Benchmark {
 public:
  ProtocolBenchmarkOf(std::shared_ptr<const TransportSpec> spec, const ProtocolBenchmark& entry)
      : spec_(std::move(spec)), entry_(entry) {}

  BenchmarkInfo info() const override { return entry_.info; }
  std::optional<std::string> unavailable(const Context& ctx) const override {
    return spec_->unavailable ? spec_->unavailable(ctx) : std::nullopt;
  }
  std::vector<Params> variants(const Context& ctx) const override {
    if (spec_->variants) return spec_->variants(ctx, entry_.protocol);
    return {Params{{"direction", std::string(p2p_direction(entry_.protocol))}}};
  }
  Movement movement(const Context& ctx, const Params& p) const override {
    if (spec_->movement) return spec_->movement(ctx, p, entry_.protocol);
    return p2p_movement(entry_.protocol, spec_->mechanism, host_memory(std::nullopt, Allocator::Pageable),
                        host_memory(std::nullopt, Allocator::Pageable));
  }
  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    if (spec_->refuse_size)
      if (auto why = spec_->refuse_size(bytes)) throw Skip(*why);
    return make_protocol_workload(ctx, spec_->make, params, entry_.protocol, bytes);
  }

 private:
  std::shared_ptr<const TransportSpec> spec_;
  ProtocolBenchmark entry_;
};

void add_protocols(const std::shared_ptr<const TransportSpec>& spec) {
  for (const ProtocolBenchmark& entry : spec->protocols)
    Registry::instance().add(std::make_unique<ProtocolBenchmarkOf>(spec, entry));
}

const bool registered = register_transport_family(&add_protocols);

}  // namespace
}  // namespace commatlas
