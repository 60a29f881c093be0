// commatlas-engine: the measuring half of commatlas. The Python CLI (`commatlas`) drives it and
// renders what it writes; it can also be run by hand or under any MPI launcher.
//
//   commatlas-engine list [--json]
//   commatlas-engine info [--json]
//   commatlas-engine topo [--json]      (JSON either way; the Python CLI renders it)
//   commatlas-engine run --out FILE [--suite S] [--only P] [--exclude P] [--sizes LIST]
//                        [--time-budget SEC] [--quick] [--threads N] [--numa LIST]
//                        [--reservoir N] [--seed N] [--progress text|json|none] [--mpi] [--watchdog SEC]
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "build_info.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/error.h"
#include "core/json.h"
#include "core/records.h"
#include "core/registry.h"
#include "core/runner.h"
#include "core/sizes.h"
#include "topology/topology.h"

#ifdef COMMATLAS_HAVE_MPI
#include "backends/mpi/mpi_group.h"
#endif

namespace commatlas {
namespace {

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

double parse_positive_double(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && v < 1e6) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " needs a positive number of seconds, got '" + text + "'");
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

// Seconds a benchmark point may take before the job is aborted; 0 turns the watchdog off.
double parse_watchdog(const std::string& text) {
  if (text == "0") return 0;
  return parse_positive_double("--watchdog", text);
}

struct Args {
  std::string command;
  bool json = false;
  bool use_mpi = false;
  std::string out;
  std::vector<std::string> suites, only, exclude;
  std::string sizes, numa;
  ProgressMode progress = ProgressMode::Text;
  RunOptions options;
};

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) throw UsageError("usage: commatlas-engine {list|info|topo|run} [options]");
  a.command = argv[1];
  if (a.command != "list" && a.command != "info" && a.command != "topo" && a.command != "run")
    throw UsageError("unknown command '" + a.command + "' (use list, info, topo or run)");
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--json") a.json = true;
    else if (flag == "--mpi") a.use_mpi = true;
    else if (flag == "--out") a.out = next();
    else if (flag == "--suite") { auto v = split_list(next()); a.suites.insert(a.suites.end(), v.begin(), v.end()); }
    else if (flag == "--only") { auto v = split_list(next()); a.only.insert(a.only.end(), v.begin(), v.end()); }
    else if (flag == "--exclude") { auto v = split_list(next()); a.exclude.insert(a.exclude.end(), v.begin(), v.end()); }
    else if (flag == "--sizes") a.sizes = next();
    else if (flag == "--numa") a.numa = next();
    else if (flag == "--time-budget") a.options.time_budget_s = parse_positive_double(flag, next());
    else if (flag == "--quick") a.options.quick = true;
    else if (flag == "--threads") a.options.threads = static_cast<int>(parse_count(flag, next(), 1, 4096));
    else if (flag == "--reservoir") a.options.reservoir = static_cast<std::size_t>(parse_count(flag, next(), 1, 1000000));
    else if (flag == "--seed") a.options.seed = static_cast<std::uint64_t>(parse_count(flag, next(), 0, 1LL << 62));
    else if (flag == "--watchdog") a.options.watchdog_s = parse_watchdog(next());
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
  if (a.options.quick && a.options.time_budget_s == RunOptions{}.time_budget_s) a.options.time_budget_s = 0.02;
  if (!a.sizes.empty()) a.options.sizes = parse_size_list(a.sizes);
  return a;
}

void validate_against_host(Args& a, const HostFacts& host) {
  if (!a.numa.empty()) {
    for (const std::string& item : split_list(a.numa)) {
      const int node = static_cast<int>(parse_count("--numa", item, 0, 1 << 20));
      if (std::find(host.numa_nodes.begin(), host.numa_nodes.end(), node) == host.numa_nodes.end()) {
        std::string have;
        for (int n : host.numa_nodes) have += (have.empty() ? "" : ",") + std::to_string(n);
        throw UsageError("NUMA node " + item + " does not exist (this machine has: " + have + ")");
      }
      a.options.numa_nodes.push_back(node);
    }
  }
  for (std::uint64_t s : a.options.sizes) {
    if (s > host.memory_available)
      throw UsageError("size " + format_size(s) + " exceeds the memory available on this host (" +
                       format_size(host.memory_available) + ")");
  }
}

void write_host(JsonWriter& w, const HostFacts& host) {
  utsname u{};
  uname(&u);
  w.key("host").begin_object();
  w.field("hostname", SingleProcessGroup().hostname());
  w.field("os", std::string(u.sysname));
  w.field("kernel", std::string(u.release));
  w.field("machine", std::string(u.machine));
  w.field("cpu_model", host.cpu_model);
  w.field("logical_cpus", host.logical_cpus);
  w.field("memory_total_bytes", static_cast<std::uint64_t>(host.memory_total));
  w.field("memory_available_bytes", static_cast<std::uint64_t>(host.memory_available));
  w.key("numa_nodes").begin_array();
  for (int n : host.numa_nodes) w.value(n);
  w.end_array();
  w.field("numa_placement", host.numa_placement);
  w.end_object();
}

int cmd_info(const Args& a, const HostFacts& host) {
  JsonWriter w;
  w.begin_object();
  w.field("version", std::string(COMMATLAS_VERSION));
  w.field("git_sha", std::string(COMMATLAS_GIT_SHA));
  w.field("compiler", std::string(COMMATLAS_COMPILER));
  w.field("build_type", std::string(COMMATLAS_BUILD_TYPE));
  write_host(w, host);
  w.key("backends").begin_object();
  w.key("host").begin_object().field("built", true).end_object();
  for (const auto& probe : BackendRegistry::instance().all()) {
    w.key(probe->name()).begin_object();
    w.field("built", true);
    try {
      probe->describe(w);
    } catch (const std::exception& e) {
      w.field("error", std::string(e.what()));
    }
    w.end_object();
  }
  // "name=reason;name=reason" for backends CMake could not build.
  for (const std::string& entry : [] {
         std::vector<std::string> v;
         std::string s = COMMATLAS_MISSING_BACKENDS, cur;
         for (char c : s) {
           if (c == ';') { if (!cur.empty()) v.push_back(cur); cur.clear(); } else cur += c;
         }
         if (!cur.empty()) v.push_back(cur);
         return v;
       }()) {
    const auto eq = entry.find('=');
    w.key(entry.substr(0, eq)).begin_object();
    w.field("built", false);
    w.field("reason", eq == std::string::npos ? std::string("not built") : entry.substr(eq + 1));
    w.end_object();
  }
  w.end_object();
  w.end_object();
  if (a.json) {
    std::cout << w.str() << '\n';
  } else {
    std::cout << w.str() << '\n';  // the Python CLI renders the human form
  }
  return 0;
}

int cmd_topo() {
  JsonWriter w;
  write_topology_json(gpu_topology(), w);
  std::cout << w.str() << '\n';
  return 0;  // no GPU is an answer, not a failure: the JSON carries the reason
}

int cmd_list(const Args& a, Context& ctx) {
  JsonWriter w;
  w.begin_array();
  for (const Benchmark* b : Registry::instance().all()) {
    const BenchmarkInfo info = b->info();
    std::optional<std::string> why;
    try {
      why = b->unavailable(ctx);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why && !info.ranks.accepts(ctx.group.size()))
      why = "needs " + std::to_string(info.ranks.min) + "+ ranks (runs under mpiexec)";
    if (a.json) {
      w.begin_object();
      w.field("key", info.key).field("category", to_string(info.category));
      w.field("interface", to_string(info.interface)).field("suite", info.suite);
      w.field("metric", to_string(info.metric)).field("description", info.description);
      w.field("min_ranks", info.ranks.min).field("max_ranks", info.ranks.max);
      w.field("runnable", !why.has_value());
      if (why) w.field("reason", *why);
      w.end_object();
    } else {
      std::printf("%-32s %-15s %-14s %s%s\n", info.key.c_str(), to_string(info.category).c_str(),
                  to_string(info.interface).c_str(), info.description.c_str(),
                  why ? (" [not here: " + *why + "]").c_str() : "");
    }
  }
  w.end_array();
  if (a.json) std::cout << w.str() << '\n';
  return 0;
}

int cmd_run(Args& a, Context& ctx) {
  if (a.out.empty()) throw UsageError("run needs --out FILE");
  const auto selected = select_benchmarks(a.suites, a.only, a.exclude);
  if (selected.empty()) throw UsageError("the selection matches no benchmark");
  std::unique_ptr<RecordFile> out;
  if (ctx.group.rank() == 0) out = std::make_unique<RecordFile>(a.out);
  const RunSummary s = run_benchmarks(selected, ctx, out.get(), a.progress);
  if (ctx.group.rank() == 0 && a.progress == ProgressMode::Text)
    std::fprintf(stderr, "%d results, %d skipped, %d errors -> %s\n", s.results, s.skipped, s.errors, a.out.c_str());
  return 0;
}

int main_inner(int argc, char** argv) {
  Args args = parse_args(argc, argv);
  HostFacts host = discover_host();
  validate_against_host(args, host);

  std::unique_ptr<Group> group;
#ifdef COMMATLAS_HAVE_MPI
  if (args.use_mpi || launched_by_mpi()) group = start_mpi_group(&argc, &argv);
#else
  if (args.use_mpi) throw UsageError("this engine was built without MPI (see `commatlas info`)");
#endif
  if (!group) group = std::make_unique<SingleProcessGroup>();

  if (args.command == "info") return cmd_info(args, host);
  if (args.command == "topo") return cmd_topo();
  Context ctx(args.options, *group, host);
  if (args.command == "list") return cmd_list(args, ctx);
  try {
    return cmd_run(args, ctx);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    // An error that escaped the per-point handling leaves the job in an unknown state: every
    // rank must go, or the others wait forever in their next collective.
    std::fprintf(stderr, "commatlas-engine: rank %d: %s\n", group->rank(), e.what());
    group->abort(1);
  }
  return 1;
}

}  // namespace
}  // namespace commatlas

int main(int argc, char** argv) {
  try {
    return commatlas::main_inner(argc, argv);
  } catch (const commatlas::UsageError& e) {
    std::fprintf(stderr, "commatlas-engine: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commatlas-engine: error: %s\n", e.what());
    return 1;
  }
}
