// reference.hang: a benchmark that never finishes, so the watchdog (core/watchdog.h) can be
// tested on a machine without GPUs. Registered only when COMMATLAS_TEST_HANG=1: it must never
// appear in a real run.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/registry.h"

namespace commatlas {
namespace {

class HangingWorkload final : public Workload {
 public:
  Accounting accounting() const override {
    Accounting a;
    a.timing = "none: this operation never completes (watchdog test)";
    return a;
  }
  void run(std::int64_t, std::int64_t, std::vector<double>&) override {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // what a lost message looks like from here
  }
  Verification verify() override { return {false, 0, "a hanging operation has nothing to check"}; }
  VerifyMethod verify_method() const override { return VerifyMethod::None; }

 private:
  void prepare_batch() override {}
};

class Hang final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"reference.hang", Category::Reference, "host",
            "never finishes: exercises the watchdog (only with COMMATLAS_TEST_HANG=1)", Metric::Latency,
            RankRange{1, 0}, {8}, {8}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Nothing, MoveDirection::None, Mechanism::Harness, no_memory(), no_memory());
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t) const override {
    return std::make_unique<HangingWorkload>();
  }
};

const bool registered = [] {
  const char* flag = std::getenv("COMMATLAS_TEST_HANG");
  return flag && std::strcmp(flag, "1") == 0 && Registry::instance().add(std::make_unique<Hang>());
}();

}  // namespace
}  // namespace commatlas
