#include "core/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <set>

#include "core/error.h"
#include "core/json.h"
#include "core/node_facts.h"
#include "core/sizes.h"
#include "core/tiers.h"
#include "core/watchdog.h"
#include "core/wire.h"

namespace commatlas {
namespace {

class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, bool is_root, int total) : mode_(is_root ? mode : ProgressMode::None), total_(total) {
    if (mode_ == ProgressMode::Json) emit(JsonWriter().begin_object().field("event", "start").field("total", total_).end_object().str());
  }

  void point(const BenchmarkInfo& info, const Params* params, std::uint64_t bytes, const char* status,
             const Measurement* m) {
    ++done_;
    if (mode_ == ProgressMode::Json) {
      JsonWriter w;
      w.begin_object().field("event", "point").field("done", done_).field("total", total_);
      w.field("benchmark", info.key).field("params", params ? params->describe() : std::string());
      w.field("bytes", static_cast<std::uint64_t>(bytes)).field("status", status);
      if (m) w.field("median_s", m->stats.median).field("gbps", gbps(m->accounting.bytes_per_op, m->stats.median));
      w.end_object();
      emit(w.str());
    } else if (mode_ == ProgressMode::Text) {
      std::fprintf(stderr, "[%d/%d] %s %s %s: %s\n", done_, total_, info.key.c_str(),
                   params ? params->describe().c_str() : "", format_size(bytes).c_str(), status);
    }
  }

 private:
  static void emit(const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  ProgressMode mode_;
  int total_;
  int done_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The variant as its records name it: with the run's record params (swept environment).
Params recorded_params(const Params& params, const RunOptions& options) {
  Params recorded = params;
  for (const auto& [key, value] : options.record_params) recorded.set(key, value);
  return recorded;
}

// A soak runs its point for the soak's length on purpose: the limit counts from its end.
double watchdog_limit(const RunOptions& options) {
  return options.watchdog_s > 0 ? options.watchdog_s + options.soak_s : 0;
}

// What a variant moves, as its records say it: nodes are the ranks' hosts, the swept environment
// is a choice like any other. Benchmark-wide records (no variant) keep only what is known before
// any variant is: the operation, direction and mechanism.
Movement declared_movement(const Benchmark& b, const Context& ctx, const Params* params,
                           const std::vector<std::string>& hosts) {
  Movement m = b.movement(ctx, params ? *params : Params{});
  for (const auto& [key, value] : ctx.options.record_params) m.choices.set(key, value);
  // Which MPI library carries the bytes is a choice like an allocator, for the movements MPI
  // itself moves (not NCCL or CUDA IPC run from an MPI job).
  const MpiLibrary* library = ctx.group.mpi_library();
  if (library && (m.mechanism == Mechanism::MpiHost || m.mechanism == Mechanism::MpiStaged ||
                  m.mechanism == Mechanism::MpiGpuAware))
    m.choices.set("mpi_library", library->label());
  m.same_node = true;
  for (const std::string& h : hosts) m.same_node = m.same_node && h == hosts.front();
  if (!params) {
    m.from.reset();
    m.to.reset();
    m.by.reset();
    m.participants.reset();
    return m;
  }
  const std::string own = hosts.empty() ? ctx.group.hostname() : hosts.front();
  for (std::optional<Endpoint>* e : {&m.from, &m.to, &m.by}) {
    if (!*e || !(*e)->node.empty() || (*e)->memory == Memory::None) continue;
    const std::optional<int> rank = (*e)->rank;
    if (rank && *rank >= 0 && *rank < static_cast<int>(hosts.size()))
      (*e)->node = hosts[static_cast<std::size_t>(*rank)];
    else if (!rank && m.same_node)  // every rank's buffer, all on one host
      (*e)->node = own;
  }
  return m;
}

}  // namespace

std::vector<std::uint64_t> sizes_for(const BenchmarkInfo& info, const RunOptions& options) {
  if (!options.sizes.empty()) return options.sizes;
  return options.quick && !info.quick_sizes.empty() ? info.quick_sizes : info.default_sizes;
}

// Each bare reference loop runs right after the benchmark it checks (movement.reference_of), so
// the two are compared under one state of the machine: between runs of one 2x H200 host a
// 32-thread memcpy at 1 MiB read anywhere from 35 to 186 GB/s, and a reference that ran 25 s after
// its partner judged the harness by that drift. Every rank computes the same order.
std::vector<const Benchmark*> references_after_partners(const std::vector<const Benchmark*>& selected,
                                                        const Context& ctx) {
  auto partner_of = [&](const Benchmark* b) -> std::string {
    if (b->info().category != Category::Reference) return "";
    try {
      return b->movement(ctx, Params{}).reference_of;
    } catch (const std::exception&) {
      return "";
    }
  };
  std::vector<const Benchmark*> out;
  std::vector<std::pair<const Benchmark*, std::string>> references;
  for (const Benchmark* b : selected) {
    const std::string partner = partner_of(b);
    const bool partner_selected = !partner.empty() && std::any_of(selected.begin(), selected.end(), [&](const Benchmark* o) {
      return o->info().key == partner;
    });
    if (partner_selected)
      references.emplace_back(b, partner);
    else
      out.push_back(b);
  }
  for (const auto& placed : references) {
    const Benchmark* reference = placed.first;
    const std::string& partner = placed.second;  // a plain name: C++17 lambdas cannot capture bindings
    auto at = std::find_if(out.begin(), out.end(), [&](const Benchmark* o) { return o->info().key == partner; });
    // After the partner and any reference already placed behind it.
    while (at != out.end() && (*at)->info().key == partner) ++at;
    while (at != out.end() && partner_of(*at) == partner) ++at;
    out.insert(at, reference);
  }
  return out;
}

RunSummary run_benchmarks(const std::vector<const Benchmark*>& all_selected, Context& ctx, RecordFile* out,
                          ProgressMode progress_mode, const NodeFacts* node_facts) {
  const std::vector<const Benchmark*> selected = references_after_partners(all_selected, ctx);
  const bool root = ctx.group.rank() == 0;
  auto write = [&](const std::string& line) {
    if (root && out) out->append(line);
  };
  const int ranks = ctx.group.size();

  struct Plan {
    const Benchmark* benchmark;
    BenchmarkInfo info;
    std::optional<std::string> unavailable;
    std::vector<Params> variants;
    std::vector<std::uint64_t> sizes;
    // Per variant, the largest default size the default tier measures (0: every size).
    std::vector<std::uint64_t> size_caps;
  };
  std::vector<Plan> plans;
  int total = 0;
  for (const Benchmark* b : selected) {
    Plan p{b, b->info(), std::nullopt, {}, {}, {}};
    if (!p.info.ranks.accepts(ranks)) {
      p.unavailable = "needs " + std::to_string(p.info.ranks.min) +
                      (p.info.ranks.max == 0 ? "+" : p.info.ranks.max == p.info.ranks.min ? "" : "-" + std::to_string(p.info.ranks.max)) +
                      " ranks, this run has " + std::to_string(ranks);
    } else {
      p.unavailable = b->unavailable(ctx);
    }
    if (!p.unavailable) {
      // Rank 0 decides each variant's tier for every rank: params built from gathered facts (the
      // GPU of each rank, gathered to rank 0) are complete only there, and ranks that kept
      // different variants ran different points (a hang, or MPI_ERR_TRUNCATE, on H100 with 2 ranks).
      // A size cap applies to the default sizes only: sizes the user asked for are measured.
      const bool capped_sizes = !ctx.options.full && ctx.options.sizes.empty();
      p.sizes = sizes_for(p.info, ctx.options);
      std::sort(p.sizes.begin(), p.sizes.end(), std::greater<>());
      for (Params& v : b->variants(ctx)) {
        const bool keep = ctx.options.full || tier_of(p.info, v) == Tier::Default;
        if (ctx.group.broadcast(keep ? 1 : 0) == 0) continue;
        const TierRule* cap = capped_sizes ? size_cap_rule(p.info, v) : nullptr;
        const auto cap_bytes = static_cast<std::uint64_t>(ctx.group.broadcast(cap ? static_cast<std::int64_t>(cap->above_bytes) : 0));
        p.variants.push_back(std::move(v));
        p.size_caps.push_back(cap_bytes);
        for (std::uint64_t bytes : p.sizes) total += cap_bytes == 0 || bytes <= cap_bytes ? 1 : 0;
      }
    }
    plans.push_back(std::move(p));
  }

  // Every rank's host, once per run (on rank 0, which writes the records): endpoint nodes and
  // same_node come from it.
  const std::vector<std::string> hosts = ctx.group.rank_nodes();

  ProgressReporter progress(progress_mode, root, total);
  Placement placement{ctx.group.rank_nodes(), job_facts_from_environment(), {}, {}};
  // Every rank takes part in the gather, so it happens whether or not there is a hook.
  placement.rank_nics = ctx.group.gather_strings(node_facts ? node_facts->local_nic(ctx) : std::string());
  placement.rank_cpus = ctx.group.gather_strings(this_process_cpus());
  placement.cpu_cache_bytes = ctx.host.last_level_cache_bytes;
  RunSummary summary;
  for (const Plan& plan : plans) {
    if (plan.unavailable) {
      const Params recorded = recorded_params(Params{}, ctx.options);
      const Movement movement = declared_movement(*plan.benchmark, ctx, nullptr, hosts);
      const PointId id{plan.info, &recorded, std::nullopt, ranks, ctx.options.repeat, &placement, &movement,
                         ctx.group.mpi_library()};
      if (ctx.options.skip_points.count(point_key(id))) continue;
      write(skip_record(id, *plan.unavailable));
      ++summary.skipped;
      continue;
    }
    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
      const Params& params = plan.variants[v];
      const std::uint64_t size_cap = plan.size_caps[v];
      const Params recorded = recorded_params(params, ctx.options);
      const Movement movement = declared_movement(*plan.benchmark, ctx, &params, hosts);
      // Largest size first: the variant is prepared (allocated, filled) once, and each smaller
      // size runs inside the same buffers (Workload::resize) unless the workload needs fresh
      // memory. The previous size's time seeds the next one's calibration.
      std::unique_ptr<Workload> workload;
      std::optional<MeasureHint> hint;
      // Every record is written as soon as it is known; the points measured wait here for the
      // confirmation pass after the sweep, whose verdicts follow as stability records.
      struct Pending {
        std::uint64_t bytes;
        Measurement m;
        Movement measured;
      };
      std::vector<Pending> pending;
      std::uint64_t workload_bytes = 0;  // the size `workload` is at now
      // A variant that prepares fresh memory at every size (first touch, managed migration, a
      // chase's chain, a pattern's layout) cannot walk back to a size in one set of buffers. Each
      // size's workload is kept after its point instead, so that the confirmation pass measures it
      // again in the buffers it ran in, as a resizable variant's does. Only kFreshHoldBytes of a
      // variant's sizes are kept at once: past them a size is let go, and its point says why.
      std::map<std::uint64_t, std::unique_ptr<Workload>> held;
      std::uint64_t held_bytes = 0;
      std::set<std::uint64_t> let_go;
      auto hold = [&](std::unique_ptr<Workload> w, std::uint64_t at) {
        if (held_bytes + at > kFreshHoldBytes) {
          let_go.insert(at);
          return;  // freed here, before the next size is prepared
        }
        held_bytes += at;
        held[at] = std::move(w);
      };
      bool wire_asked = false;                        // the variant's link counters were read
      std::optional<WireCheck> variant_wire_failure;  // and showed the bytes off their route
      std::uint64_t wire_failed_bytes = 0;            // at this size
      auto watchdog_for = [&](const PointId& id, std::uint64_t bytes, const char* what) {
        return std::make_unique<Watchdog>(
            watchdog_limit(ctx.options),
            std::string(what) + plan.info.key + (params.describe().empty() ? "" : " " + params.describe()) + " at " +
                format_size(bytes),
            ctx.group, [&, id](const std::string& line) {
              // The hung point keeps a record of its own: what stopped, where.
              write(error_record(id, line.substr(line.find("watchdog: "))));
            });
      };
      auto pending_id = [&](const Pending& p) {
        return PointId{plan.info, &recorded, p.bytes, ranks, ctx.options.repeat, &placement, &p.measured,
                       ctx.group.mpi_library()};
      };
      auto flush_pending = [&](std::vector<Pending>& points) {
        for (const Pending& p : points) write(stability_record(pending_id(p), p.m.stability, p.m.cost.confirm_s));
        points.clear();
      };
      // The confirmation pass: each point again, in the same buffers, now that every other size of
      // the variant has run in between (core/harness.h, Stability): a size's own held buffers where
      // the variant prepares fresh memory per size, else the variant's one set resized to it.
      auto confirm_pending = [&](std::vector<Pending>& points) {
        std::string why_not;
        if (ctx.options.soak_s > 0) why_not = "a soak's own series is its evidence of noise over time";
        for (auto it = points.begin(); it != points.end();) {
          Pending& p = *it;
          std::unique_ptr<Workload> own;  // the size's held buffers, freed once it is confirmed
          if (const auto h = held.find(p.bytes); why_not.empty() && h != held.end()) {
            own = std::move(h->second);
            held.erase(h);
          }
          std::string why_this = why_not;
          if (why_this.empty() && !own && let_go.count(p.bytes))
            why_this = "the variant prepares fresh memory at every size, and this size's buffers were let go: "
                       "its sizes would have held more than " + format_size(kFreshHoldBytes) + " at once";
          else if (why_this.empty() && !own && !workload)
            why_this = "the variant prepares fresh memory at every size, so no size can be measured again in its buffers";
          if (!why_this.empty()) {
            p.m.stability.why = why_this;
            ++it;
            continue;
          }
          const PointId id = pending_id(p);
          try {
            const auto watchdog = watchdog_for(id, p.bytes, "the confirmation of ");
            const auto t0 = std::chrono::steady_clock::now();
            if (!own && p.bytes != workload_bytes && !ctx.group.all(workload->resize_for_next_size(p.bytes))) {
              workload.reset();
              continue;  // the next round of the loop records why
            }
            if (!own) workload_bytes = p.bytes;
            Workload& w = own ? *own : *workload;
            const Verification v = confirm(w, ctx, p.m);
            p.m.cost.confirm_s = seconds_since(t0);
            if (!v.ok) {
              // Its result stands (its own batches were checked); the second batch moved wrong bytes.
              workload.reset();
              p.m.stability.why = "the confirmation batch FAILED its data check: " + v.detail;
              why_not = "an earlier confirmation of this variant failed its data check";
              ++summary.errors;
            }
          } catch (const UsageError&) {
            throw;
          } catch (const RecordWriteError&) {
            throw;
          } catch (const std::exception& e) {
            workload.reset();
            p.m.stability.why = std::string("the confirmation batch failed: ") + e.what();
            why_not = "an earlier confirmation of this variant failed";
          }
          ++it;
        }
        held.clear();
      };
      for (std::uint64_t bytes : plan.sizes) {
        if (size_cap > 0 && bytes > size_cap) continue;  // a --full size of this variant (core/tiers.cpp)
        const PointId id{plan.info, &recorded, bytes, ranks, ctx.options.repeat, &placement, &movement,
                         ctx.group.mpi_library()};
        if (ctx.options.skip_points.count(point_key(id))) {
          progress.point(plan.info, &params, bytes, "done earlier", nullptr);
          continue;
        }
        if (variant_wire_failure) {
          // The variant's bytes took another route than its movement declares: no size of it is
          // measured as what it claims to be. The route's detail is in that size's record: said
          // once, a report can set this variant's other sizes in one row beneath it.
          write(error_record(id, "not measured: the wire check failed at this variant's largest size, " +
                                     format_size(wire_failed_bytes)));
          ++summary.errors;
          progress.point(plan.info, &params, bytes, "wire check FAILED", nullptr);
          continue;
        }
        try {
          const auto watchdog = watchdog_for(id, bytes, "");
          const auto t0 = std::chrono::steady_clock::now();
          // Every rank must agree, or one rank would re-prepare (collectively) alone.
          if (workload && !ctx.group.all(workload->resize_for_next_size(bytes))) hold(std::move(workload), workload_bytes);
          if (!workload) workload = plan.benchmark->prepare(ctx, params, bytes);
          workload_bytes = bytes;
          const double prepare_s = seconds_since(t0);
          // The GPUs' link counters as a second witness (core/wire.h), once per variant: at its first
          // point, its largest size, once its first op and probe have sized a sample and before the
          // warm-up. The link a variant's bytes cross is the variant's, and a pass at every size cost
          // the default run seconds; a failed route fails every size, this one unwarmed and untimed.
          std::optional<WireCheck> wire;
          BeforeWarmup ask_wire;
          if (!wire_asked) {
            ask_wire = [&](const Measurement& sized) {
              wire = witness_wire(*workload, ctx, movement, sized);
              wire_asked = true;
              return !(wire && wire->verdict == WireVerdict::Failed);
            };
          }
          Measurement m = measure(*workload, ctx, hint ? &*hint : nullptr, ask_wire);
          m.cost.prepare_s = prepare_s;
          m.cost.wall_s = seconds_since(t0);
          if (wire && wire->verdict == WireVerdict::Failed) {
            variant_wire_failure = *wire;
            wire_failed_bytes = bytes;
          }
          // Only a verified time may size the next point: a loop that moved nothing times in
          // nanoseconds, and the next size's untimed warm-up (which does move bytes) would be given
          // a million operations per sample (staged MPI at 64 KiB ran into the watchdog that way).
          hint.reset();
          if (m.verification.ok) hint = MeasureHint{m.seconds_per_op, m.accounting.bytes_per_op};
          if (variant_wire_failure) {
            write(error_record(id, "wire check failed: " + variant_wire_failure->detail, &*wire));
            ++summary.errors;
            progress.point(plan.info, &params, bytes, "wire check FAILED", nullptr);
          } else if (!m.verification.ok) {
            workload.reset();  // what it holds is not known to be right any more
            write(error_record(id, "data check failed: " + m.verification.detail));
            ++summary.errors;
            progress.point(plan.info, &params, bytes, "data check FAILED", nullptr);
          } else {
            Pending p{bytes, std::move(m), movement};
            if (root) {
              // Peak, cache residency and expected goodput: the node's one answer for the movement.
              const PointFacts facts = node_facts ? node_facts->facts(p.measured, bytes, placement) : PointFacts{};
              p.measured.cache_resident = facts.peak.cache_resident;
              write(result_record(pending_id(p), p.m, facts, wire ? &*wire : nullptr));
            }
            ++summary.results;
            progress.point(plan.info, &params, bytes, "ok", &p.m);
            pending.push_back(std::move(p));
          }
        } catch (const Skip& skip) {
          workload.reset();
          write(skip_record(id, skip.what()));
          ++summary.skipped;
          progress.point(plan.info, &params, bytes, "skipped", nullptr);
        } catch (const UsageError&) {
          throw;
        } catch (const RecordWriteError&) {
          throw;  // nothing later could be kept either
        } catch (const FatalError& e) {
          flush_pending(pending);
          write(error_record(id, e.what()));
          progress.point(plan.info, &params, bytes, "error", nullptr);
          throw;  // every later point would fail the same way, or worse, look fine
        } catch (const std::exception& e) {
          workload.reset();
          write(error_record(id, e.what()));
          ++summary.errors;
          progress.point(plan.info, &params, bytes, "error", nullptr);
        }
      }
      confirm_pending(pending);
      flush_pending(pending);
    }
  }
  return summary;
}

}  // namespace commatlas
