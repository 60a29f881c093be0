// `commatlas-engine ingest`: measurements taken outside the engine (the OSU-method program, the
// torch suite) become records through the same writer (core/records.h) and the same statistics
// (core/stats.h) as every engine point, so only the engine decides what a record looks like.
//
// Input: JSON Lines, one measurement per line (blank lines ignored):
//   {"type": "result" | "skip" | "error",
//    "benchmark": "torch.copy", "category": "explicit_copy", "interface": "torch", "suite": "torch",
//    "metric": "bandwidth" | "latency",
//    "params": {...},             (the variant, in declaration order)
//    "movement": {...},           (as records write it; optional on skips)
//    "bytes": N | null, "ranks": N, "repeat": N (optional), "mpi_library": {...} (optional),
//    "time": unix seconds (optional: when it was measured; default now),
//    result only:
//    "samples_s": [per-operation seconds of every sample], "bytes_per_op": X,
//    "timing": {"method": "...", "ops_per_sample": N, "warmup_samples": N, "max_over_ranks": bool,
//               "host_activity": {"window_s": s, "cpu_pair": {"cpus": [a, b], "round_trip_ns": ns} | null}
//               (optional: where the host had put the job's CPUs after the pass, core/cpu_pair.h)},
//    "confirmation": {"median_s": per op, "samples": N, "separation_s": s (optional),
//                     "host_activity": {...} (optional, as timing's)} (optional: a second pass),
//    "latency_includes": "..." (optional),
//    "verified": {"ok": bool, "bytes_checked": N, "method": "bytes" | ..., "detail": "..." (on failure)},
//    skip: "reason": "...";  error: "message": "..."}
// A result whose data check failed becomes an error record ("data check failed: <detail>"), as in
// the harness: a wrong copy never becomes a figure.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace commatlas {

// Every input line's record, in order; throws UsageError naming the line on any bad input, before
// anything is written.
std::vector<std::string> ingest_records(std::istream& in);

}  // namespace commatlas
