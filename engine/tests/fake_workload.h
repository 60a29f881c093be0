// Test doubles for the harness: a workload that reports made-up operation times (no test is timed;
// sample_wall_s only makes samples take wall time), and a group that records what the harness asks
// of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/benchmark.h"
#include "core/group.h"

namespace commatlas::testing {

class FakeWorkload : public Workload {
 public:
  explicit FakeWorkload(double seconds_per_op, Accounting accounting = {}) : t_op_(seconds_per_op), accounting_(std::move(accounting)) {}

  Accounting accounting() const override { return accounting_; }
  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    runs.push_back({samples, ops, prepared_});
    prepared_ = false;
    for (std::int64_t s = 0; s < samples; ++s) {
      double t = ops_done_ < slow_ops ? slow_seconds_per_op : t_op_;
      // Deterministic noise, uniform in +-noise around t (a fixed LCG: every run the same).
      if (noise > 0) {
        lcg_ = lcg_ * 6364136223846793005ull + 1442695040888963407ull;
        t *= 1 + noise * (static_cast<double>(lcg_ >> 11) / 9007199254740992.0 * 2 - 1);
      }
      seconds.push_back(t);
      ops_done_ += ops;
      if (sample_wall_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sample_wall_s));
    }
  }
  Verification verify() override { return verification; }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  struct Call {
    std::int64_t samples, ops;
    bool prepared;  // begin_timed_batch() came right before this run
  };
  std::vector<Call> runs;
  Verification verification{true, 64, ""};
  // The first slow_ops operations take slow_seconds_per_op each (set-up paid in the first calls).
  std::int64_t slow_ops = 0;
  double slow_seconds_per_op = 0;
  // Relative spread of the reported times (0: every sample the same).
  double noise = 0;
  // Wall time each sample really takes, whatever it reports (a sample's fixed cost: a blocked-start
  // kernel, events, a synchronize); 0: none.
  double sample_wall_s = 0;

 private:
  void prepare_batch() override { prepared_ = true; }
  bool prepared_ = false;
  std::int64_t ops_done_ = 0;
  std::uint64_t lcg_ = 1;
  double t_op_;
  Accounting accounting_;
};

// One rank whose "slowest rank" is twice as slow, so a test can see the reduction applied.
class RecordingGroup final : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string hostname() const override { return "test"; }
  std::string kind() const override { return "test"; }
  void barrier() override {}
  std::int64_t broadcast(std::int64_t v) override { return v; }
  void max_over_ranks(std::vector<double>& values) override {
    ++max_over_ranks_calls;
    for (double& v : values) v *= 2;
  }
  // As if the other rank's mean time were twice this one's.
  double mean_over_ranks(double v, bool has_value) override { return has_value ? 1.5 * v : 0.0; }
  bool all(bool ok) override { return ok; }
  // As if a second rank checked as many bytes again.
  std::int64_t sum(std::int64_t v) override { return 2 * v; }
  std::vector<std::string> gather_strings(const std::string& v) override { return {v}; }
  [[noreturn]] void abort(int) override { std::abort(); }

  int max_over_ranks_calls = 0;
};

}  // namespace commatlas::testing
