#include "core/arguments.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>

#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

long long parse_count(const std::string& flag, const std::string& text, long long lo, long long hi) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                   ", got '" + text + "'");
}

namespace {

double parse_positive_double(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && v < 1e6) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " needs a number of seconds above 0 and below 1000000 (11.6 days), got '" + text + "'");
}

// --precision X: the relative half-width of the median's 95% interval a point samples to
// (0.005 = +-0.5%), or "off" for the fixed budget.
double parse_precision(const std::string& text) {
  if (text == "off") return 0;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && v < 1) return v;
  } catch (const std::exception&) {
  }
  throw UsageError("--precision needs a fraction between 0 and 1 (0.005 = +-0.5%) or 'off', got '" + text + "'");
}

// Seconds a benchmark point may take before the job is aborted; 0 turns the watchdog off.
double parse_watchdog(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0 && v < 1e6) return v;
  } catch (const std::exception&) {
  }
  throw UsageError("--watchdog needs 0 (off) or more seconds, below 1000000 (11.6 days), got '" + text + "'");
}


// --record-env NAMES: the engine reads each variable itself, so a record's env.NAME is what the
// measuring process saw (also across a launcher that might not have passed it on).
void add_record_env(RunOptions& options, const std::string& names) {
  for (const std::string& name : split_list(names)) {
    const bool valid = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    }) && !std::isdigit(static_cast<unsigned char>(name[0]));
    if (!valid) throw UsageError("--record-env: '" + name + "' is not an environment variable name");
    const char* value = std::getenv(name.c_str());
    options.record_params.emplace_back("env." + name, value ? value : "(unset)");
  }
}

// --skip-points FILE: one point key (core/records.h) per line, the points a resumed run has.
std::set<std::string> read_point_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--skip-points: cannot read " + path + ": " + std::strerror(errno));
  std::set<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) keys.insert(line);
  return keys;
}

}  // namespace

Args parse_args(int argc, const char* const* argv) {
  Args a;
  if (argc < 2) throw UsageError("usage: commatlas-engine {list|info|topo|vocabulary|run|ingest|hold} [options]");
  a.command = argv[1];
  if (a.command != "list" && a.command != "info" && a.command != "topo" && a.command != "vocabulary" &&
      a.command != "run" && a.command != "ingest" && a.command != "hold")
    throw UsageError("unknown command '" + a.command + "' (use list, info, topo, vocabulary, run, ingest or hold)");
  bool budget_given = false;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--json") a.json = true;
    else if (flag == "--mpi") a.use_mpi = true;
    else if (flag == "--out") a.out = next();
    else if (flag == "--in") a.in = next();
    else if (flag == "--suite") { auto v = split_list(next()); a.suites.insert(a.suites.end(), v.begin(), v.end()); }
    else if (flag == "--only") { auto v = split_list(next()); a.only.insert(a.only.end(), v.begin(), v.end()); }
    else if (flag == "--exclude") { auto v = split_list(next()); a.exclude.insert(a.exclude.end(), v.begin(), v.end()); }
    else if (flag == "--sizes") a.sizes = next();
    else if (flag == "--numa") a.numa = next();
    else if (flag == "--time-budget") { a.options.time_budget_s = parse_positive_double(flag, next()); budget_given = true; }
    else if (flag == "--precision") a.options.precision = parse_precision(next());
    else if (flag == "--quick") a.options.quick = true;
    else if (flag == "--full") a.options.full = true;
    else if (flag == "--threads") a.options.threads = static_cast<int>(parse_count(flag, next(), 1, 4096));
    else if (flag == "--reservoir") a.options.reservoir = static_cast<std::size_t>(parse_count(flag, next(), 1, 1000000));
    else if (flag == "--seed") a.options.seed = static_cast<std::uint64_t>(parse_count(flag, next(), 0, 1LL << 62));
    else if (flag == "--watchdog") a.options.watchdog_s = parse_watchdog(next());
    else if (flag == "--soak") a.options.soak_s = parse_positive_double(flag, next());
    else if (flag == "--record-env") add_record_env(a.options, next());
    else if (flag == "--repeat-index") a.options.repeat = static_cast<int>(parse_count(flag, next(), 0, 1000000));
    else if (flag == "--skip-points") a.options.skip_points = read_point_keys(next());
    else if (flag == "--progress") {
      const std::string v = next();
      if (v == "text") a.progress = ProgressMode::Text;
      else if (v == "json") a.progress = ProgressMode::Json;
      else if (v == "none") a.progress = ProgressMode::None;
      else throw UsageError("--progress takes text, json or none, got '" + v + "'");
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }
  if (!budget_given)
    a.options.time_budget_s = a.options.quick ? kDefaultTimeBudgetQuick
                              : a.options.precision > 0 ? kDefaultTimeBudgetPrecision : kDefaultTimeBudgetFixed;
  if (!a.sizes.empty()) a.options.sizes = parse_size_list(a.sizes);
  // A soak is one time series: of one benchmark at one size, or its samples would mix.
  if (a.options.soak_s > 0 && a.options.sizes.size() != 1) throw UsageError("--soak needs --sizes with exactly one size");
  return a;
}


}  // namespace commatlas
