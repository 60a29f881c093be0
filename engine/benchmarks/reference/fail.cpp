// reference.fail: a benchmark whose every run fails with a MeasurementError, so tests can check
// that one failing benchmark becomes an error record and the run goes on (tests/test_faults.py).
// Registered only when COMMATLAS_TEST_FAIL=1: it must never appear in a real run.
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/registry.h"

namespace commatlas {
namespace {

class FailingWorkload final : public Workload {
 public:
  Accounting accounting() const override {
    Accounting a;
    a.timing = "none: this operation always fails (fault test)";
    return a;
  }
  void run(std::int64_t, std::int64_t, std::vector<double>&) override {
    throw MeasurementError("reference.fail: deliberate failure (COMMATLAS_TEST_FAIL=1)");
  }
  Verification verify() override { return {false, 0, "a failed operation has nothing to check"}; }
  VerifyMethod verify_method() const override { return VerifyMethod::None; }

 private:
  void prepare_batch() override {}
};

class Fail final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return {"reference.fail", Category::Reference, "host",
            "always fails: exercises error records (only with COMMATLAS_TEST_FAIL=1)", Metric::Latency,
            RankRange{1, 0}, {8}, {8}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Nothing, MoveDirection::None, Mechanism::Harness, no_memory(), no_memory());
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t) const override {
    return std::make_unique<FailingWorkload>();
  }
};

const bool registered = [] {
  const char* flag = std::getenv("COMMATLAS_TEST_FAIL");
  return flag && std::strcmp(flag, "1") == 0 && Registry::instance().add(std::make_unique<Fail>());
}();

}  // namespace
}  // namespace commatlas
