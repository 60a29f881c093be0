// The results writer: one JSON object per line, in the format that schema/results.schema.json
// defines. Only this file decides what a record looks like.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/benchmark.h"
#include "core/harness.h"
#include "core/placement.h"
#include "core/json.h"
#include "core/movement.h"
#include "core/node_facts.h"
#include "core/wire.h"
#include "core/mpi_library.h"

namespace commatlas {

// The results file could not be written (disk full, file gone): no later record could be kept,
// so this ends the run instead of becoming an error record.
class RecordWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends records to a JSON Lines file, flushing after each so a crash loses nothing measured.
class RecordFile {
 public:
  explicit RecordFile(const std::string& path);  // throws UsageError if it cannot be opened
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;
  void append(const std::string& json_line);

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

struct PointId {
  const BenchmarkInfo& info;
  const Params* params = nullptr;        // null for benchmark-wide records
  std::optional<std::uint64_t> bytes;    // null for benchmark-wide records
  int ranks = 1;
  std::optional<int> repeat = std::nullopt;  // repetition of the whole selection (commatlas run --repeat)
  const Placement* placement = nullptr;      // multi-rank points: each rank's node, the job
  const Movement* movement = nullptr;        // what the point moves (core/movement.h); null: not declared
  const MpiLibrary* mpi_library = nullptr;   // the MPI library of an MPI run; null: not under MPI
  std::optional<double> time = std::nullopt; // when it was measured (Unix seconds); unset: now
};

// "host.memcpy|threads=4|4096|1|r2": one point, stable across runs, so a resumed run can skip
// the points it already has (--skip-points). Written into every record as "point".
std::string point_key(const PointId& id);

// `facts`: what the node says about the point (core/node_facts.h): its path's peak, or why there is
// none, and a collective's expected goodput. `wire`: what the GPUs' link counters saw (core/wire.h),
// where the point has a route.
std::string result_record(const PointId& id, const Measurement& m, const PointFacts& facts = {},
                          const WireCheck* wire = nullptr);
std::string skip_record(const PointId& id, const std::string& reason);
// Whether a point measured earlier repeated in its confirmation batch (the runner's pass after the
// variant's sweep, core/harness.h): a record of its own, written after the point's result, so a
// run that stops mid-sweep keeps every result it measured.
std::string stability_record(const PointId& id, const Stability& stability, double confirm_s);
std::string error_record(const PointId& id, const std::string& message, const WireCheck* wire = nullptr);

// The "movement" object of a record.
void write_movement(JsonWriter& w, const Movement& m);

}  // namespace commatlas
