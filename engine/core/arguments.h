// The engine's command line, parsed without touching the machine: a plain function of argv, so
// that it can be unit-tested and fuzzed (engine/fuzz/). Throws UsageError on any bad input.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/runner.h"

namespace commatlas {

struct Args {
  std::string command;
  bool json = false;
  bool use_mpi = false;
  std::string out;
  std::string in = "-";  // ingest: the measurements' file ("-": standard input)
  std::vector<std::string> suites, only, exclude;
  std::string sizes, numa;
  ProgressMode progress = ProgressMode::Text;
  RunOptions options;
};

Args parse_args(int argc, const char* const* argv);

// "a, b,,c" -> {"a", "b", "c"}: the engine's comma lists.
std::vector<std::string> split_list(const std::string& s);

// A whole number in [lo, hi] or a UsageError naming the flag.
long long parse_count(const std::string& flag, const std::string& text, long long lo, long long hi);

}  // namespace commatlas
