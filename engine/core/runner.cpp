#include "core/runner.h"

#include <cstdio>
#include <exception>

#include "core/error.h"
#include "core/json.h"
#include "core/sizes.h"
#include "core/watchdog.h"

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

// The variant as its records name it: with the run's record params (swept environment).
Params recorded_params(const Params& params, const RunOptions& options) {
  Params recorded = params;
  for (const auto& [key, value] : options.record_params) recorded.set(key, value);
  return recorded;
}

// What a variant moves, as its records say it: nodes are the ranks' hosts, the swept environment
// is a choice like any other. Benchmark-wide records (no variant) keep only what is known before
// any variant is: the operation, direction and mechanism.
Movement declared_movement(const Benchmark& b, const Context& ctx, const Params* params,
                           const std::vector<std::string>& hosts) {
  Movement m = b.movement(ctx, params ? *params : Params{});
  for (const auto& [key, value] : ctx.options.record_params) m.choices.set(key, value);
  m.same_node = true;
  for (const std::string& h : hosts) m.same_node = m.same_node && h == hosts.front();
  if (!params) {
    m.from.reset();
    m.to.reset();
    return m;
  }
  const std::string own = hosts.empty() ? ctx.group.hostname() : hosts.front();
  for (std::optional<Endpoint>* e : {&m.from, &m.to}) {
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

RunSummary run_benchmarks(const std::vector<const Benchmark*>& selected, Context& ctx, RecordFile* out,
                          ProgressMode progress_mode) {
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
  };
  std::vector<Plan> plans;
  int total = 0;
  for (const Benchmark* b : selected) {
    Plan p{b, b->info(), std::nullopt, {}, {}};
    if (!p.info.ranks.accepts(ranks)) {
      p.unavailable = "needs " + std::to_string(p.info.ranks.min) +
                      (p.info.ranks.max == 0 ? "+" : p.info.ranks.max == p.info.ranks.min ? "" : "-" + std::to_string(p.info.ranks.max)) +
                      " ranks, this run has " + std::to_string(ranks);
    } else {
      p.unavailable = b->unavailable(ctx);
    }
    if (!p.unavailable) {
      p.variants = b->variants(ctx);
      p.sizes = sizes_for(p.info, ctx.options);
      total += static_cast<int>(p.variants.size() * p.sizes.size());
    }
    plans.push_back(std::move(p));
  }

  // Every rank's host, once per run (on rank 0, which writes the records): endpoint nodes and
  // same_node come from it.
  const std::vector<std::string> hosts = ctx.group.gather_strings(ctx.group.hostname());

  ProgressReporter progress(progress_mode, root, total);
  RunSummary summary;
  for (const Plan& plan : plans) {
    if (plan.unavailable) {
      const Params recorded = recorded_params(Params{}, ctx.options);
      const Movement movement = declared_movement(*plan.benchmark, ctx, nullptr, hosts);
      const PointId id{plan.info, &recorded, std::nullopt, ranks, ctx.options.repeat, &movement};
      if (ctx.options.skip_points.count(point_key(id))) continue;
      write(skip_record(id, *plan.unavailable));
      ++summary.skipped;
      continue;
    }
    for (const Params& params : plan.variants) {
      const Params recorded = recorded_params(params, ctx.options);
      const Movement movement = declared_movement(*plan.benchmark, ctx, &params, hosts);
      for (std::uint64_t bytes : plan.sizes) {
        const PointId id{plan.info, &recorded, bytes, ranks, ctx.options.repeat, &movement};
        if (ctx.options.skip_points.count(point_key(id))) {
          progress.point(plan.info, &params, bytes, "done earlier", nullptr);
          continue;
        }
        try {
          const Watchdog watchdog(ctx.options.watchdog_s,
                                  plan.info.key + (params.describe().empty() ? "" : " " + params.describe()) + " at " +
                                      format_size(bytes),
                                  ctx.group);
          auto workload = plan.benchmark->prepare(ctx, params, bytes);
          const Measurement m = measure(*workload, ctx);
          if (!m.verification.ok) {
            write(error_record(id, "data check failed: " + m.verification.detail));
            ++summary.errors;
            progress.point(plan.info, &params, bytes, "data check FAILED", nullptr);
          } else {
            if (root) {
              // Peak and cache residency from the movement, in one place (topology/movement_peak.cpp).
              Movement measured = movement;
              const PeakAnswer peak = peak_of_movement(measured, bytes, ctx.host.last_level_cache_bytes);
              measured.cache_resident = peak.cache_resident;
              PointId with_cache = id;
              with_cache.movement = &measured;
              write(result_record(with_cache, m, peak));
            }
            ++summary.results;
            progress.point(plan.info, &params, bytes, "ok", &m);
          }
        } catch (const Skip& skip) {
          write(skip_record(id, skip.what()));
          ++summary.skipped;
          progress.point(plan.info, &params, bytes, "skipped", nullptr);
        } catch (const UsageError&) {
          throw;
        } catch (const RecordWriteError&) {
          throw;  // nothing later could be kept either
        } catch (const FatalError& e) {
          write(error_record(id, e.what()));
          progress.point(plan.info, &params, bytes, "error", nullptr);
          throw;  // every later point would fail the same way, or worse, look fine
        } catch (const std::exception& e) {
          write(error_record(id, e.what()));
          ++summary.errors;
          progress.point(plan.info, &params, bytes, "error", nullptr);
        }
      }
    }
  }
  return summary;
}

}  // namespace commatlas
