// Drives the selected benchmarks over their variants and sizes, writing one record per point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/benchmark.h"
#include "core/context.h"
#include "core/records.h"

namespace commatlas {

enum class ProgressMode { None, Text, Json };

struct RunSummary {
  int results = 0, skipped = 0, errors = 0;
};

// Sizes a benchmark runs at under these options.
std::vector<std::uint64_t> sizes_for(const BenchmarkInfo& info, const RunOptions& options);

// `selected` with every bare reference loop moved right behind the benchmark it checks (when that
// one is selected too), so the two run back to back.
std::vector<const Benchmark*> references_after_partners(const std::vector<const Benchmark*>& selected,
                                                        const Context& ctx);

// Runs every point; rank 0 appends records to `out` (other ranks pass nullptr). Per-point
// failures become error records and the run goes on.
class NodeFacts;  // core/node_facts.h
RunSummary run_benchmarks(const std::vector<const Benchmark*>& selected, Context& ctx, RecordFile* out,
                          ProgressMode progress, const NodeFacts* node_facts = nullptr);

}  // namespace commatlas
