// commatlas-engine: the measuring half of commatlas. The Python CLI (`commatlas`) drives it and
// renders what it writes; it can also be run by hand or under any MPI launcher.
//
//   commatlas-engine list [--json]
//   commatlas-engine info [--json]
//   commatlas-engine topo [--json]      (JSON either way; the Python CLI renders it)
//   commatlas-engine vocabulary [--json] (the movement model's names and their attributes)
//   commatlas-engine run --out FILE [--suite S] [--only P] [--exclude P] [--sizes LIST]
//                        [--time-budget SEC] [--precision X|off] [--quick] [--full] [--threads N] [--numa LIST]
//                        [--reservoir N] [--seed N] [--progress text|json|none] [--mpi] [--watchdog SEC]
//                        [--record-env NAMES] [--repeat-index N] [--skip-points FILE]
//   commatlas-engine ingest --out FILE [--in FILE|-]  (measurements taken outside the engine -> records:
//                        core/ingest.h)
//   commatlas-engine hold  (starts the GPU driver, then waits for its standard input to close: cmd_hold)
//   (argument parsing: core/arguments.cpp)
#include <sys/utsname.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "build_info.h"
#include "git_info.h"
#include "core/affinity.h"
#include "core/arguments.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/error.h"
#include "core/ingest.h"
#include "core/json.h"
#include "core/placement.h"
#include "core/process_state.h"
#include "core/records.h"
#include "core/registry.h"
#include "core/runner.h"
#include "core/sizes.h"
#include "topology/host_memory.h"
#include "core/tiers.h"
#include "topology/nics.h"
#include "core/verification.h"
#include "topology/topology.h"

#ifdef COMMATLAS_HAVE_MPI
#include "backends/mpi/mpi_group.h"
#endif
#if defined(COMMATLAS_HAVE_MPI) && defined(COMMATLAS_HAVE_GPU)
#include "backends/mpi/gpu_message_buffers_mpi.h"
#endif

namespace commatlas {
namespace {

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
  w.field("last_level_cache_bytes", static_cast<std::uint64_t>(host.last_level_cache_bytes));
  w.key("numa_nodes").begin_array();
  for (int n : host.numa_nodes) w.value(n);
  w.end_array();
  w.field("numa_placement", host.numa_placement);
  // The DRAM peak host-memory figures are compared with, or why there is none: said once here
  // so that a reader learns it from the machine, not from every row.
  const HostMemoryPeak& memory = host_memory_peak();
  w.key("memory_peak").begin_object();
  w.key("gbps");
  if (memory.peak) w.value(memory.peak->gbps); else w.null();
  w.field(memory.peak ? "source" : "unknown", memory.peak ? memory.peak->source : memory.unknown);
  w.end_object();
  w.end_object();
}

int cmd_info(const Args& a, const HostFacts& host) {
  JsonWriter w;
  w.begin_object();
  w.field("version", std::string(COMMATLAS_VERSION));
  w.field("git_sha", std::string(COMMATLAS_GIT_SHA));
  w.key("git_dirty");
  if (std::string(COMMATLAS_GIT_DIRTY) == "unknown") w.null(); else w.value(std::string(COMMATLAS_GIT_DIRTY) == "true");
  w.field("provenance", std::string(COMMATLAS_PROVENANCE));
  w.field("compiler", std::string(COMMATLAS_COMPILER));
  w.field("build_type", std::string(COMMATLAS_BUILD_TYPE));
  write_host(w, host);
  const HeapState& heap = heap_state();
  w.key("process_state").begin_object();
  w.key("heap").begin_object().field("fixed", heap.fixed);
  if (heap.fixed)
    w.field("mmap_threshold_bytes", static_cast<std::uint64_t>(heap.mmap_threshold))
        .field("trim_threshold_bytes", static_cast<std::uint64_t>(heap.trim_threshold));
  w.field("why", heap.why).end_object();
#if defined(COMMATLAS_HAVE_MPI) && defined(COMMATLAS_HAVE_GPU)
  const mpi::RankGpuWrites gpu_writes = mpi::rank_gpu_writes();
  w.key("rank_gpu_writes").begin_object();
  w.field("bytes", static_cast<std::uint64_t>(gpu_writes.bytes)).field("passes", gpu_writes.passes);
  w.field("why", gpu_writes.why).end_object();
#endif
  w.end_object();
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
  write_topology_json(gpu_topology(), w, &node_nics());
  std::cout << w.str() << '\n';
  return 0;  // no GPU is an answer, not a failure: the JSON carries the reason
}

// The movement model's closed vocabularies, each value with its meaning and attributes (an
// operation's kind, participants and directions; a mechanism's interface, display name and
// colour), and the params a movement consumes (what each becomes): the schema's enums, the tables in
// docs/results-format.md and the Python package's copy
// (python/commatlas/vocabulary.json) are checked against this (tests/test_vocabulary.py).
const std::vector<std::pair<const char*, std::vector<VocabularyEntry>>>& vocabularies() {
  static const std::vector<std::pair<const char*, std::vector<VocabularyEntry>>> tables = {
      {"operation", operation_vocabulary()}, {"operation_kind", operation_kind_vocabulary()},
      {"direction", direction_vocabulary()}, {"mechanism", mechanism_vocabulary()},
      {"memory", memory_vocabulary()}, {"allocator", allocator_vocabulary()}, {"param", param_vocabulary()}};
  return tables;
}

int cmd_vocabulary(const Args& a) {
  if (!a.json) {
    // One block per vocabulary: each name, then its attributes and its meaning on lines of their
    // own, so that every line fits 80 columns.
    for (const auto& [name, entries] : vocabularies()) {
      std::printf("%s\n", name);
      for (const VocabularyEntry& e : entries) {
        std::string attributes;
        for (const auto& [k, v] : e.attributes) attributes += (attributes.empty() ? "" : "  ") + k + "=" + v;
        if (!e.directions.empty()) {
          attributes += "  directions=";
          for (std::size_t i = 0; i < e.directions.size(); ++i) attributes += (i ? "," : "") + e.directions[i];
        }
        std::printf("  %s\n", e.name.c_str());
        if (!attributes.empty()) std::printf("      %s\n", attributes.c_str());
        std::printf("      %s\n", e.meaning.c_str());
      }
    }
    return 0;
  }
  JsonWriter w;
  w.begin_object();
  for (const auto& [name, entries] : vocabularies()) {
    w.key(name).begin_array();
    for (const VocabularyEntry& e : entries) {
      w.begin_object().field("name", e.name).field("meaning", e.meaning);
      for (const auto& [k, v] : e.attributes) w.field(k, v);
      if (!e.directions.empty()) {
        w.key("directions").begin_array();
        for (const std::string& d : e.directions) w.value(d);
        w.end_array();
      }
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
  std::cout << w.str() << '\n';
  return 0;
}

// The library or engine a benchmark's records name (`interface`): its movement's, as declared
// before any variant.
std::string interface_of(const Benchmark& b, const Context& ctx) {
  try {
    return interface_of(b.movement(ctx, Params{}));
  } catch (const std::exception&) {
    return "unknown";
  }
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
    // Variants per tier, where this machine can say (variants may ask the GPUs or the ranks).
    int default_variants = 0, full_variants = 0;
    std::vector<std::pair<std::string, std::string>> full_list;  // params, why
    if (!why) {
      try {
        for (const Params& p : b->variants(ctx)) {
          if (const TierRule* rule = full_tier_rule(info, p)) {
            ++full_variants;
            full_list.emplace_back(p.describe(), rule->why);
          } else {
            ++default_variants;
            if (const TierRule* cap = size_cap_rule(info, p))
              full_list.emplace_back(p.describe() + " above " + format_size(cap->above_bytes), cap->why);
          }
        }
      } catch (const std::exception&) {
        default_variants = full_variants = 0;
      }
    }
    if (a.json) {
      w.begin_object();
      w.field("key", info.key).field("category", to_string(info.category));
      w.field("interface", interface_of(*b, ctx)).field("suite", info.suite);
      w.field("metric", to_string(info.metric)).field("description", info.description);
      w.field("min_ranks", info.ranks.min).field("max_ranks", info.ranks.max);
      w.field("runnable", !why.has_value());
      if (why) w.field("reason", *why);
      if (!why) {
        w.key("variants").begin_object().field("default", default_variants).field("full", full_variants).end_object();
        w.key("full_tier").begin_array();
        for (const auto& [params, reason] : full_list)
          w.begin_object().field("params", params).field("why", reason).end_object();
        w.end_array();
      }
      w.end_object();
    } else {
      const std::string tiers = why ? "" : std::to_string(default_variants) + " default + " + std::to_string(full_variants) + " full";
      std::printf("%-32s %-15s %-14s %-20s %s%s\n", info.key.c_str(), to_string(info.category).c_str(),
                  interface_of(*b, ctx).c_str(), tiers.c_str(), info.description.c_str(),
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
  const RunSummary s = run_benchmarks(selected, ctx, out.get(), a.progress, &topology_node_facts());
  if (ctx.group.rank() == 0 && a.progress == ProgressMode::Text)
    std::fprintf(stderr, "%d results, %d skipped, %d errors -> %s\n", s.results, s.skipped, s.errors, a.out.c_str());
  return 0;
}

// Keeps the GPU driver started while `commatlas run` starts its engine processes one after another.
// On 2x H100 (driver 580, persistence mode on) the first process to initialise CUDA pays about
// 0.45 s, and so does the next one once the last has gone; with one process holding it, `info`
// took 0.06-0.08 s instead of 0.51-0.63 (results/nvidia-h100-x2/figures-that-hold-19). A held
// driver has no context and no memory on any GPU, and nothing it keeps is a measured state: every
// figure is taken after its own process's first operation and warm-up, and fresh runs with and
// without the holder read alike. Prints one line once the driver is up, then reads its standard
// input until the end (the CLI closes it, or dies), and exits.
int cmd_hold() {
  for (const auto& probe : BackendRegistry::instance().all()) {
    try {
      probe->start_driver();
    } catch (const std::exception&) {
      // Nothing held: the engine processes start as they would without this one.
    }
  }
  std::printf("holding\n");
  std::fflush(stdout);
  char buffer[256];
  while (std::fread(buffer, 1, sizeof buffer, stdin) > 0) {
  }
  return 0;
}

// Every line is read and checked before the first record is written: bad input writes nothing.
int cmd_ingest(const Args& a) {
  if (a.out.empty()) throw UsageError("ingest needs --out FILE");
  std::vector<std::string> records;
  if (a.in == "-") {
    records = ingest_records(std::cin);
  } else {
    std::ifstream in(a.in);
    if (!in) throw UsageError("ingest: cannot read " + a.in);
    records = ingest_records(in);
  }
  RecordFile out(a.out);
  for (const std::string& r : records) out.append(r);
  return 0;
}

int main_inner(int argc, char** argv) {
  // Load every GPU module when the context is created. Under lazy loading (the CUDA 12+ default) a
  // kernel's first launch waits for the device to go idle, so a first launch queued behind the
  // start-blocking spin kernel (event_timing.cu) waits for a kernel that waits for the host: a
  // stall until the spin times out, on every benchmark whose kernels no earlier point loaded. A
  // value the user set is kept (and shows in the run's environment).
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  // Before MPI and the GPU libraries allocate anything: their per-call allocations must meet the
  // same heap whatever ran before them in the job (core/process_state.h).
  settle_heap();
  Args args = parse_args(argc, argv);
  if (args.command == "vocabulary") return cmd_vocabulary(args);  // no host, no MPI: names only
  if (args.command == "ingest") return cmd_ingest(args);      // nothing measured: no host, no MPI
  if (args.command == "hold") return cmd_hold();              // no host, no MPI: the driver only
  HostFacts host = discover_host();
  validate_against_host(args, host);

  std::unique_ptr<Group> group;
#ifdef COMMATLAS_HAVE_MPI
  if (args.use_mpi || mpi::launched_by_mpi()) group = mpi::start_mpi_group(&argc, &argv);
#else
  if (args.use_mpi) throw UsageError("this engine was built without MPI (see `commatlas info`)");
#endif
  if (!group) group = std::make_unique<SingleProcessGroup>();
#if defined(COMMATLAS_HAVE_MPI) && defined(COMMATLAS_HAVE_GPU)
  if (args.command == "run" && group->kind() == "mpi") mpi::bind_rank_to_gpu(*group);
#endif
  // After the CUDA context, whose threads keep the rank's whole block of cores (core/affinity.h);
  // only where each rank has a block of its own (unbound ranks would all pin to the same CPU).
  if (args.command == "run" && group->kind() == "mpi") {
    const std::vector<std::string> cpus = group->gather_strings(this_process_cpus());
    const std::vector<std::string> nodes = group->rank_nodes();
    if (group->broadcast(group->rank() == 0 && each_rank_has_its_own_cpus(cpus, nodes) ? 1 : 0) == 1)
      pin_measuring_thread();
  }
  // The test-only switches are read here, once, and said out loud: a run under them measures
  // nothing anyone should quote.
  if (args.command == "run" && group->rank() == 0) {
    if (test_skip_move())
      std::fprintf(stderr, "commatlas-engine: COMMATLAS_TEST_SKIP_MOVE=1: timed batches move nothing (test only)\n");
    if (test_share_gpu())
      std::fprintf(stderr, "commatlas-engine: COMMATLAS_TEST_SHARE_GPU=1: IPC and NCCL may share one GPU (test only)\n");
  }

  if (args.command == "info") return cmd_info(args, host);
  if (args.command == "topo") return cmd_topo();
  Context ctx(args.options, *group, host);
  if (args.command == "list") return cmd_list(args, ctx);
  try {
    const int status = cmd_run(args, ctx);
    group->run_end_steps();  // every rank is here: collective finalizers cannot wait for a missing one
    return status;
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
  // Past a file-size limit (ulimit -f) a write then fails like on a full disk, and the run ends
  // with a line naming the results file, instead of the process dying without a word.
  std::signal(SIGXFSZ, SIG_IGN);
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
