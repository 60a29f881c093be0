// gpu.copy_<initiator>_fanout: one GPU sending to all others at once (one_to_all) and all others
// sending to one (all_to_one); bytes are the sum over the copies.
#include "benchmarks/explicit_copy/copy_family.h"

namespace commatlas {
namespace {

class GpuCopyFanout final : public CopyBenchmark {
 public:
  using CopyBenchmark::CopyBenchmark;

  BenchmarkInfo info() const override {
    BenchmarkInfo i = copy_family_info(*initiator_, "_fanout", "one GPU to all others and all to one, at once; ",
                                       {256ull << 20}, {64ull << 20});
    i.full_tier.push_back({{{"root_gpu", "!0"}}, "the same figure as root 0 within 0.2% (one_to_all and all_to_one)"});
    return i;
  }

  std::optional<std::string> unavailable(const Context&) const override { return cuda::fewer_than_two_gpus(); }

  std::vector<Params> variants(const Context&) const override {
    std::vector<Params> out;
    for (cuda::Fan fan : {cuda::Fan::OneToAll, cuda::Fan::AllToOne})
      for (int root = 0; root < cuda::gpu_count(); ++root) {
        Params p{{"fan", to_string(fan)},
                 {"root_gpu", std::int64_t{root}},
                 {"gpus", std::int64_t{cuda::gpu_count()}},
                 {"device_allocator", to_string(Allocator::Device)},
                 {"engine_side", to_string(cuda::Side::Src)}};
        initiator_->add_params(p);
        out.push_back(p);
      }
    return out;
  }

  Movement movement(const Context&, const Params& p) const override {
    const Mechanism mechanism = initiator_->mechanism();
    if (p.entries().empty()) return movement_of_benchmark(Operation::Copy, MoveDirection::OneToAll, mechanism);
    const cuda::Fan fan = cuda::parse_enum(p.text("fan"), {cuda::Fan::OneToAll, cuda::Fan::AllToOne}, "fan");
    const int root = static_cast<int>(p.integer("root_gpu"));
    const Allocator allocator = parse_allocator(p.text("device_allocator"));
    // The other end is every other GPU at once: gpu unset, the record's params say how many.
    const auto root_end = gpu_memory(root, allocator), others = gpu_memory(std::nullopt, allocator);
    Movement m = fan == cuda::Fan::OneToAll
                     ? movement_between(Operation::Copy, MoveDirection::OneToAll, mechanism, root_end, others)
                     : movement_between(Operation::Copy, MoveDirection::AllToOne, mechanism, others, root_end);
    cuda::keep_initiator_choices(m, p, *initiator_);
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const cuda::Fan fan = cuda::parse_enum(params.text("fan"), {cuda::Fan::OneToAll, cuda::Fan::AllToOne}, "fan");
    const cuda::Side side =
        cuda::parse_enum(params.text("engine_side"), {cuda::Side::Src, cuda::Side::Dst}, "engine_side");
    cuda::CopySetup setup;
    setup.legs = cuda::fanout_legs(fan, static_cast<int>(params.integer("root_gpu")), cuda::gpu_count(), side);
    setup.initiator = initiator_;
    setup.params = params;
    setup.bytes = bytes;
    setup.seed = ctx.options.seed;
    return std::make_unique<cuda::CopyWorkload>(setup);
  }
};

std::unique_ptr<Benchmark> fanout(const cuda::InitiatorPtr& initiator) {
  return std::make_unique<GpuCopyFanout>(initiator);
}

COMMATLAS_REGISTER_COPY_FAMILY(fanout);

}  // namespace
}  // namespace commatlas
