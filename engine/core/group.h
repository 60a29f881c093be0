// The processes taking part in a run. The harness talks to the group only through this interface,
// so a single process and an MPI job go through the same timing and reduction code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/mpi_library.h"

namespace commatlas {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank within this node (chooses the GPU in one-rank-per-GPU runs).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual std::string hostname() const = 0;
  // Every rank's node (host name), in rank order, on every rank: records say which ranks share a
  // node, and ranks are placed one per GPU within their node (local_rank counts ranks of one node).
  virtual std::vector<std::string> rank_nodes() const { return std::vector<std::string>(size(), hostname()); }
  virtual std::string kind() const = 0;  // "single-process", "mpi"
  // The MPI library the ranks run on (null outside MPI): every record of the run names it, and
  // the movements that go through it take it as a choice.
  virtual const MpiLibrary* mpi_library() const { return nullptr; }
  virtual void barrier() = 0;
  // Rank 0's value, on every rank: rank 0 makes calibration decisions so all ranks agree.
  virtual std::int64_t broadcast(std::int64_t value) = 0;
  // Element-wise maximum over ranks, result on every rank. Collectives take the slowest rank's
  // time per iteration: the operation is not done until the last rank is. Ranks may bring fewer
  // values: a rank past a point-to-point pair's two ends times nothing, and its missing values
  // count as 0 (times are never negative), so every rank leaves with the longest length.
  virtual void max_over_ranks(std::vector<double>& values) = 0;
  // Mean of `value` over the ranks where `has_value` (0 when none), on every rank. With each
  // rank's mean time it is the OSU micro-benchmarks' collective figure ("Avg Latency").
  virtual double mean_over_ranks(double value, bool has_value) = 0;
  // True on every rank iff `ok` is true on every rank (a data check passes only if it passes everywhere).
  virtual bool all(bool ok) = 0;
  // Sum over ranks, on every rank (bytes every rank checked: rank 0 may have received nothing).
  virtual std::int64_t sum(std::int64_t value) = 0;
  // Every rank's string, on rank 0 (in rank order); other ranks get an empty vector.
  virtual std::vector<std::string> gather_strings(const std::string& value) = 0;
  // Tears the whole job down after an unrecoverable error on one rank.
  [[noreturn]] virtual void abort(int code) = 0;

  // A step every rank runs once when the job ends normally, while every rank is still there and
  // before MPI ends (the last added runs first): a library initialised over the job's ranks
  // (NVSHMEM) finalizes there, collectively. Not run when the job is torn down by abort().
  void at_end(std::function<void()> step) { end_steps_.push_back(std::move(step)); }
  void run_end_steps() {
    while (!end_steps_.empty()) {
      std::function<void()> step = std::move(end_steps_.back());
      end_steps_.pop_back();
      step();
    }
  }

 private:
  std::vector<std::function<void()>> end_steps_;
};

class SingleProcessGroup final : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string hostname() const override;
  std::string kind() const override { return "single-process"; }
  void barrier() override {}
  std::int64_t broadcast(std::int64_t value) override { return value; }
  void max_over_ranks(std::vector<double>&) override {}
  double mean_over_ranks(double value, bool has_value) override { return has_value ? value : 0.0; }
  bool all(bool ok) override { return ok; }
  std::int64_t sum(std::int64_t value) override { return value; }
  std::vector<std::string> gather_strings(const std::string& value) override { return {value}; }
  [[noreturn]] void abort(int code) override;
};

}  // namespace commatlas
