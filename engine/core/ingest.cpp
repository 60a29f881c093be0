#include "core/ingest.h"

#include <cmath>
#include <limits>
#include <optional>

#include "core/collective.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/json_read.h"
#include "core/records.h"
#include "core/stats.h"

namespace commatlas {
namespace {

using Kind = JsonValue::Kind;

// A record name from one of the engine's closed vocabularies, or a UsageError listing them.
template <typename E>
E named(const std::string& what, const std::string& name, const std::vector<E>& values) {
  std::string known;
  for (E v : values) {
    if (to_string(v) == name) return v;
    known += (known.empty() ? "" : ", ") + to_string(v);
  }
  throw UsageError(what + " '" + name + "' is not one of: " + known);
}

template <typename E>
std::vector<E> all_of(std::size_t count) {
  std::vector<E> v;
  for (std::size_t i = 0; i < count; ++i) v.push_back(static_cast<E>(i));
  return v;
}

const JsonValue& need(const JsonValue& object, const char* key) {
  const JsonValue* v = object.get(key);
  if (!v) throw UsageError(std::string("'") + key + "' is missing");
  return *v;
}

std::string text(const JsonValue& object, const char* key) {
  const JsonValue& v = need(object, key);
  if (!v.is(Kind::String)) throw UsageError(std::string("'") + key + "' must be a string");
  return v.text;
}

std::string text_or(const JsonValue& object, const char* key, const std::string& fallback) {
  const JsonValue* v = object.get(key);
  if (!v || v->is(Kind::Null)) return fallback;
  if (!v->is(Kind::String)) throw UsageError(std::string("'") + key + "' must be a string");
  return v->text;
}

std::int64_t whole(const JsonValue& v, const std::string& key, std::int64_t lo) {
  if (!v.is(Kind::Number) || !v.integral || v.integer < lo)
    throw UsageError("'" + key + "' must be a whole number from " + std::to_string(lo));
  return v.integer;
}

std::optional<std::int64_t> optional_whole(const JsonValue& object, const char* key, std::int64_t lo) {
  const JsonValue* v = object.get(key);
  if (!v || v->is(Kind::Null)) return std::nullopt;
  return whole(*v, key, lo);
}

bool flag(const JsonValue& object, const char* key, bool fallback) {
  const JsonValue* v = object.get(key);
  if (!v) return fallback;
  if (!v->is(Kind::Bool)) throw UsageError(std::string("'") + key + "' must be true or false");
  return v->boolean;
}

double positive_number(const JsonValue& v, const std::string& key) {
  if (!v.is(Kind::Number) || !std::isfinite(v.number) || v.number < 0)
    throw UsageError("'" + key + "' must be a number of at least 0");
  return v.number;
}

Params params_of(const JsonValue* v) {
  Params p;
  if (!v || v->is(Kind::Null)) return p;
  if (!v->is(Kind::Object)) throw UsageError("'params' must be an object");
  for (const auto& [key, value] : v->members) {
    if (value.is(Kind::String)) p.set(key, value.text);
    else if (value.is(Kind::Bool)) p.set(key, value.boolean);
    else if (value.is(Kind::Number) && value.integral) p.set(key, value.integer);
    else if (value.is(Kind::Number)) p.set(key, value.number);
    else throw UsageError("params." + key + " must be a string, number or boolean");
  }
  return p;
}

std::optional<Endpoint> endpoint_of(const JsonValue* v, const std::string& where) {
  if (!v || v->is(Kind::Null)) return std::nullopt;
  if (!v->is(Kind::Object)) throw UsageError("movement." + where + " must be an object");
  Endpoint e;
  e.memory = named("movement." + where + ".memory", text(*v, "memory"),
                   all_of<Memory>(memory_vocabulary().size()));
  auto small = [&](const char* key) -> std::optional<int> {
    const auto n = optional_whole(*v, key, 0);
    if (n && *n > std::numeric_limits<int>::max()) throw UsageError("movement." + where + "." + key + " is too large");
    return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
  };
  e.gpu = small("gpu");
  e.numa = small("numa");
  e.rank = small("rank");
  e.node = text_or(*v, "node", "");
  e.processor = flag(*v, "processor", false);
  e.allocator = text_or(*v, "allocator", "");
  e.first_touch = text_or(*v, "first_touch", "");
  return e;
}

std::optional<Movement> movement_of(const JsonValue* v) {
  if (!v || v->is(Kind::Null)) return std::nullopt;
  if (!v->is(Kind::Object)) throw UsageError("'movement' must be an object");
  Movement m;
  m.operation = named("movement.operation", text(*v, "operation"), all_of<Operation>(operation_vocabulary().size()));
  m.direction = named("movement.direction", text(*v, "direction"), all_of<MoveDirection>(direction_vocabulary().size()));
  m.mechanism = named("movement.mechanism", text(*v, "mechanism"), all_of<Mechanism>(mechanism_vocabulary().size()));
  m.from = endpoint_of(v->get("from"), "from");
  m.to = endpoint_of(v->get("to"), "to");
  m.by = endpoint_of(v->get("by"), "by");
  if (const auto n = optional_whole(*v, "participants", 1)) m.participants = static_cast<int>(*n);
  m.choices = params_of(v->get("choices"));
  m.same_node = flag(*v, "same_node", true);
  if (const JsonValue* c = v->get("cache_resident"); c && c->is(Kind::Bool)) m.cache_resident = c->boolean;
  m.reference_of = text_or(*v, "reference_of", "");
  return m;
}

std::optional<MpiLibrary> library_of(const JsonValue* v) {
  if (!v || v->is(Kind::Null)) return std::nullopt;
  if (!v->is(Kind::Object)) throw UsageError("'mpi_library' must be an object");
  MpiLibrary l;
  l.id = text(*v, "id");
  l.name = text_or(*v, "name", "");
  l.version = text_or(*v, "version", "");
  l.gpu_support = text_or(*v, "gpu_support", "");
  l.version_text = text_or(*v, "version_text", "");
  return l;
}

// The collective a movement's operation is, for the busbw accounting every collective record has.
std::optional<CollectiveOp> collective_of(Operation op) {
  switch (op) {
    case Operation::Allreduce: return CollectiveOp::AllReduce;
    case Operation::Allgather: return CollectiveOp::AllGather;
    case Operation::ReduceScatter: return CollectiveOp::ReduceScatter;
    case Operation::Alltoall: return CollectiveOp::AllToAll;
    case Operation::Broadcast: return CollectiveOp::Broadcast;
    case Operation::Reduce: return CollectiveOp::Reduce;
    default: return std::nullopt;
  }
}

// A pass's "host_activity" as a program outside the harness reads it: the pass's window and where
// the host had put the job's CPUs ({"window_s": s, "cpu_pair": {"cpus": [a, b], "round_trip_ns":
// ns} or null}, as the OSU-method reference prints); its counters were not read (counted = false).
std::optional<HostActivity> activity_of(const JsonValue* v, const std::string& where) {
  if (!v || v->is(Kind::Null)) return std::nullopt;
  if (!v->is(Kind::Object)) throw UsageError("'" + where + "' must be an object");
  HostActivity a;
  a.counted = false;
  a.window_s = positive_number(need(*v, "window_s"), where + ".window_s");
  const JsonValue& pair = need(*v, "cpu_pair");
  if (pair.is(Kind::Null)) return a;
  if (!pair.is(Kind::Object)) throw UsageError("'" + where + ".cpu_pair' must be an object or null");
  const JsonValue& cpus = need(pair, "cpus");
  if (!cpus.is(Kind::Array) || cpus.items.size() != 2)
    throw UsageError("'" + where + ".cpu_pair.cpus' must be two CPU numbers");
  a.cpu_pair = CpuRoundTrip{static_cast<int>(whole(cpus.items[0], where + ".cpu_pair.cpus", -1)),
                            static_cast<int>(whole(cpus.items[1], where + ".cpu_pair.cpus", -1)),
                            positive_number(need(pair, "round_trip_ns"), where + ".cpu_pair.round_trip_ns")};
  return a;
}

// The ranks' copy levels around a point, as a program outside the harness reads them (the
// OSU-method program on device buffers): per rank [before, after] in microseconds, null where a
// reading failed. Kept as the harness keeps its own (Measurement::copy_level_us: two a rank, 0 for
// none), so the record writes them alike.
std::vector<double> copy_levels_of(const JsonValue* v) {
  std::vector<double> out;
  if (!v || v->is(Kind::Null)) return out;
  const char* shape = "'timing.copy_level_us' must hold a [before, after] pair of microseconds (or null) per rank";
  if (!v->is(Kind::Array)) throw UsageError(shape);
  for (const JsonValue& rank : v->items) {
    if (!rank.is(Kind::Array) || rank.items.size() != 2) throw UsageError(shape);
    for (const JsonValue& us : rank.items) out.push_back(us.is(Kind::Null) ? 0.0 : positive_number(us, "timing.copy_level_us"));
  }
  return out;
}

Measurement measurement_of(const JsonValue& in, const std::optional<Movement>& movement) {
  Measurement m;
  m.harnessed = false;
  const JsonValue& samples = need(in, "samples_s");
  if (!samples.is(Kind::Array) || samples.items.empty()) throw UsageError("'samples_s' must be a non-empty array");
  for (const JsonValue& s : samples.items) {
    const double v = positive_number(s, "samples_s");
    if (v <= 0) throw UsageError("'samples_s' must hold per-operation seconds above 0");
    m.samples.push_back(v);
  }
  m.stats = summarize(m.samples);
  m.sample_count = static_cast<std::int64_t>(m.samples.size());
  m.seconds_per_op = m.stats.median;
  Accounting& a = m.accounting;
  a.bytes_per_op = positive_number(need(in, "bytes_per_op"), "bytes_per_op");
  const JsonValue& timing = need(in, "timing");
  if (!timing.is(Kind::Object)) throw UsageError("'timing' must be an object");
  a.timing = text(timing, "method");
  m.ops_per_sample = whole(need(timing, "ops_per_sample"), "timing.ops_per_sample", 1);
  m.warmup_samples = optional_whole(timing, "warmup_samples", 0).value_or(0);
  a.max_over_ranks = flag(timing, "max_over_ranks", false);
  m.activity = activity_of(timing.get("host_activity"), "timing.host_activity");
  m.copy_level_us = copy_levels_of(timing.get("copy_level_us"));
  a.latency_includes = text_or(in, "latency_includes", "");
  if (movement && movement->participants)
    if (const auto op = collective_of(movement->operation))
      a.collective = CollectiveAccounting{to_string(*op), bus_factor(*op, *movement->participants)};
  const JsonValue& verified = need(in, "verified");
  if (!verified.is(Kind::Object)) throw UsageError("'verified' must be an object");
  m.verification.ok = flag(verified, "ok", false);
  m.verification.bytes_checked = static_cast<std::uint64_t>(optional_whole(verified, "bytes_checked", 0).value_or(0));
  std::vector<VerifyMethod> methods;
  for (std::size_t i = 0; i < verify_method_vocabulary().size(); ++i) methods.push_back(static_cast<VerifyMethod>(i));
  m.verification.method = named("verified.method", text(verified, "method"), methods);
  m.verification.detail = text_or(verified, "detail", "");
  return m;
}

// The records of one measurement: its result (or skip, or error) and, where it brings a second
// pass of its own ("confirmation": {"median_s": per op, "samples": n, "separation_s": s}, as the
// OSU-method reference's --passes 2 gives), the stability record the engine writes after a
// confirmation batch, judged by the same rule (judge_stability).
std::vector<std::string> records_of(const JsonValue& in) {
  if (!in.is(Kind::Object)) throw UsageError("a measurement must be a JSON object");
  const std::string type = text(in, "type");
  if (type != "result" && type != "skip" && type != "error")
    throw UsageError("'type' must be result, skip or error, got '" + type + "'");
  BenchmarkInfo info;
  info.key = text(in, "benchmark");
  if (info.key.empty()) throw UsageError("'benchmark' is empty");
  info.category = named("category", text(in, "category"),
                        std::vector<Category>{Category::DirectAccess, Category::ExplicitCopy, Category::PointToPoint,
                                              Category::Collective, Category::Pattern, Category::Reference});
  // The record's interface is its movement's (core/movement.h); an "interface" given here is not read.
  info.suite = text(in, "suite");
  info.metric = named("metric", text(in, "metric"), std::vector<Metric>{Metric::Bandwidth, Metric::Latency});
  const Params params = params_of(in.get("params"));
  const std::optional<Movement> movement = movement_of(in.get("movement"));
  const std::optional<MpiLibrary> library = library_of(in.get("mpi_library"));
  PointId id{info, &params, std::nullopt};
  id.params = &params;
  if (const auto b = optional_whole(in, "bytes", 0)) id.bytes = static_cast<std::uint64_t>(*b);
  const std::int64_t ranks = whole(need(in, "ranks"), "ranks", 1);
  if (ranks > std::numeric_limits<int>::max()) throw UsageError("'ranks' is too large");
  id.ranks = static_cast<int>(ranks);
  if (const auto r = optional_whole(in, "repeat", 0)) id.repeat = static_cast<int>(*r);
  id.movement = movement ? &*movement : nullptr;
  id.mpi_library = library ? &*library : nullptr;
  if (const JsonValue* t = in.get("time"); t && !t->is(Kind::Null)) id.time = positive_number(*t, "time");
  if (type == "skip") return {skip_record(id, text(in, "reason"))};
  if (type == "error") return {error_record(id, text(in, "message"))};
  if (!id.bytes) throw UsageError("a result needs 'bytes'");
  const Measurement m = measurement_of(in, movement);
  if (!m.verification.ok)
    return {error_record(id, "data check failed: " + (m.verification.detail.empty() ? std::string("the bytes differ")
                                                                                     : m.verification.detail))};
  std::vector<std::string> out{result_record(id, m)};
  if (const JsonValue* c = in.get("confirmation"); c && !c->is(Kind::Null)) {
    if (!c->is(Kind::Object)) throw UsageError("'confirmation' must be an object");
    const double median = positive_number(need(*c, "median_s"), "confirmation.median_s");
    Stability st = judge_stability(m, median, whole(need(*c, "samples"), "confirmation.samples", 1));
    if (const JsonValue* sep = c->get("separation_s"); sep && !sep->is(Kind::Null))
      st.separation_s = positive_number(*sep, "confirmation.separation_s");
    st.activity = activity_of(c->get("host_activity"), "confirmation.host_activity");
    out.push_back(stability_record(id, st, 0.0));
  }
  return out;
}

}  // namespace

std::vector<std::string> ingest_records(std::istream& in) {
  std::vector<std::string> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      for (std::string& r : records_of(parse_json(line))) records.push_back(std::move(r));
    } catch (const JsonParseError& e) {
      throw UsageError("ingest: line " + std::to_string(number) + ": " + e.what());
    } catch (const UsageError& e) {
      throw UsageError("ingest: line " + std::to_string(number) + ": " + e.what());
    }
  }
  return records;
}

}  // namespace commatlas
