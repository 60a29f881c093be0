// The harness measuring nothing: what one timed operation costs before any work is done.
// Every other figure carries this overhead, so it is measured in every run.
#include "core/harness.h"
#include "core/registry.h"

namespace commatlas {
namespace {

class EmptyWorkload final : public Workload {
 public:
  Accounting accounting() const override {
    Accounting a;
    a.bytes_per_op = 0;
    a.timing = "host steady_clock around a batch of empty operations (compiler barrier only)";
    a.latency_includes = "harness cost per timed operation: loop and clock reads amortised over the batch";
    return a;
  }
  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    // The asm barrier keeps the compiler from deleting the loop, which would time nothing at all.
    time_host_samples(samples, ops, seconds, [] { asm volatile("" ::: "memory"); });
  }
  Verification verify() override { return {true, 0, ""}; }
  // Nothing moves, so nothing can be checked; the record says so (method "none", 0 bytes).
  VerifyMethod verify_method() const override { return VerifyMethod::None; }

 private:
  void prepare_batch() override {}
};

class HarnessOverhead final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"reference.harness_overhead", Category::Reference, "host",
                    "cost of one timed operation of the harness itself (an empty operation)", Metric::Latency,
                    RankRange{1, 0}, {}, {}};
    i.default_sizes = {1};
    i.quick_sizes = {1};
    return i;
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Nothing, MoveDirection::None, Mechanism::Harness, no_memory(), no_memory());
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t) const override {
    return std::make_unique<EmptyWorkload>();
  }
};

COMMATLAS_REGISTER_BENCHMARK(HarnessOverhead);

}  // namespace
}  // namespace commatlas
