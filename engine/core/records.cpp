#include "core/records.h"

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <unistd.h>

#include "core/error.h"
#include "core/json.h"

namespace commatlas {

RecordFile::RecordFile(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw UsageError("cannot open results file " + path + ": " + std::strerror(errno));
}

RecordFile::~RecordFile() {
  if (file_) std::fclose(file_);
}

void RecordFile::append(const std::string& json_line) {
  if (std::fputs(json_line.c_str(), file_) < 0 || std::fputc('\n', file_) == EOF || std::fflush(file_) != 0)
    throw RecordWriteError("cannot write results file " + path_ + ": " + std::strerror(errno));
}

namespace {

double unix_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The part of a point's identity that every record about the point repeats (results, skips and
// errors in full, stability records beside their result): its size, rank count and repeat.
void write_size_and_ranks(JsonWriter& w, const PointId& id) {
  w.key("bytes");
  if (id.bytes)
    w.value(static_cast<std::uint64_t>(*id.bytes));
  else
    w.null();
  w.field("ranks", id.ranks);
  if (id.repeat) w.field("repeat", *id.repeat);
}

void write_identity(JsonWriter& w, const char* type, const PointId& id) {
  w.field("type", type);
  w.field("point", point_key(id));
  w.field("benchmark", id.info.key);
  w.field("category", to_string(id.info.category));
  // The library or engine of the point's mechanism (a bare reference loop: "harness").
  w.field("interface", interface_of(id.movement ? *id.movement : Movement{}));
  w.field("suite", id.info.suite);
  w.field("metric", to_string(id.info.metric));
  w.key("params").begin_object();
  if (id.params)
    for (const auto& [k, v] : id.params->entries()) w.field(k, v);
  w.end_object();
  if (id.movement) {
    w.key("movement");
    write_movement(w, *id.movement);
  }
  write_size_and_ranks(w, id);
  if (id.placement && id.ranks > 1) write_placement(w, *id.placement);
  if (id.mpi_library) {
    w.key("mpi_library").begin_object();
    w.field("id", id.mpi_library->id);
    w.field("name", id.mpi_library->name);
    w.field("version", id.mpi_library->version);
    w.field("gpu_support", id.mpi_library->gpu_support);
    w.field("version_text", id.mpi_library->version_text);
    w.end_object();
  }
  w.key("time").fixed(id.time ? *id.time : unix_time(), 3);
}

template <typename T>
void optional_field(JsonWriter& w, const char* key, const std::optional<T>& v) {
  w.key(key);
  if (v)
    w.value(*v);
  else
    w.null();
}

void text_or_null(JsonWriter& w, const char* key, const std::string& v) {
  w.key(key);
  if (v.empty())
    w.null();
  else
    w.value(v);
}

void write_endpoint(JsonWriter& w, const char* key, const std::optional<Endpoint>& e) {
  w.key(key);
  if (!e) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("memory", to_string(e->memory));
  optional_field(w, "gpu", e->gpu);
  optional_field(w, "numa", e->numa);
  optional_field(w, "rank", e->rank);
  text_or_null(w, "node", e->node);
  w.field("processor", e->processor);
  text_or_null(w, "allocator", e->allocator);
  text_or_null(w, "first_touch", e->first_touch);
  w.end_object();
}

// The fields only this harness can fill: precision-driven stopping and warm-up (inside "timing").
void write_harness_fields(JsonWriter& w, const Measurement& m) {
  // Precision-driven stopping (core/harness.h): target null in the fixed mode; reached null when
  // too few samples had a 95% interval of the median.
  w.key("precision_target");
  if (m.precision_target > 0) w.value(m.precision_target); else w.null();
  w.key("precision_reached");
  if (std::isfinite(m.precision_reached)) w.value(m.precision_reached); else w.null();
  w.field("stop_reason", to_string(m.stop_reason));
  w.field("batches", m.batches);
  w.key("warmup").begin_object();
  w.field("first_op_s", m.warmup.first_op_s);
  w.field("sized_on", to_string(m.warmup.sized_on));
  w.field("rounds", m.warmup.rounds);
  w.field("samples_per_round", m.warmup.samples_per_round);
  w.field("steady", m.warmup.steady);
  w.field("drift", m.warmup.drift);
  if (m.warmup.lap >= 0) w.field("lap", m.warmup.lap);
  w.end_object();
}

// Where the point's wall time went (seconds): the end record sums these per benchmark.
void write_cost(JsonWriter& w, const PointCost& cost) {
  w.key("cost").begin_object();
  w.key("wall_s").fixed(cost.wall_s, 6);
  w.key("prepare_s").fixed(cost.prepare_s, 6);
  w.key("calibration_s").fixed(cost.calibration_s, 6);
  w.key("warmup_s").fixed(cost.warmup_s, 6);
  w.key("timed_s").fixed(cost.timed_s, 6);
  w.key("check_s").fixed(cost.check_s, 6);
  w.end_object();
}

}  // namespace

void write_movement(JsonWriter& w, const Movement& m) {
  w.begin_object();
  w.field("operation", to_string(m.operation));
  w.field("direction", to_string(m.direction));
  w.field("mechanism", to_string(m.mechanism));
  write_endpoint(w, "from", m.from);
  write_endpoint(w, "to", m.to);
  if (m.by) write_endpoint(w, "by", m.by);
  if (m.participants) w.field("participants", *m.participants);
  w.key("choices").begin_object();
  for (const auto& [k, v] : m.choices.entries()) w.field(k, v);
  w.end_object();
  w.field("same_node", m.same_node);
  if (m.cache_resident) w.field("cache_resident", *m.cache_resident);
  if (!m.reference_of.empty()) w.field("reference_of", m.reference_of);
  w.end_object();
}

std::string point_key(const PointId& id) {
  std::string key = id.info.key + "|";
  if (id.params) {
    std::string params;
    for (const auto& [k, v] : id.params->entries()) {
      JsonWriter value;
      value.value(v);
      params += (params.empty() ? "" : ",") + k + "=" + value.str();
    }
    key += params;
  }
  key += "|" + (id.bytes ? std::to_string(*id.bytes) : std::string("-")) + "|" + std::to_string(id.ranks);
  if (id.repeat) key += "|r" + std::to_string(*id.repeat);
  // One run directory may hold the same point under several libraries (commatlas run --mpi a,b).
  if (id.mpi_library) key += "|" + id.mpi_library->id + "-" + id.mpi_library->version;
  return key;
}

std::string result_record(const PointId& id, const Measurement& m, const PointFacts& facts, const WireCheck* wire) {
  const PeakAnswer& peak = facts.peak;
  const Accounting& a = m.accounting;
  const Stats& s = m.stats;
  JsonWriter w;
  w.begin_object();
  write_identity(w, "result", id);
  w.field("bytes_per_op", a.bytes_per_op);
  w.key("timing").begin_object();
  w.field("method", a.timing);
  w.field("samples", m.sample_count);
  w.field("ops_per_sample", m.ops_per_sample);
  w.field("warmup_samples", m.warmup_samples);
  w.field("max_over_ranks", a.max_over_ranks);
  if (m.harnessed) write_harness_fields(w, m);
  if (m.host_enqueue_s) w.field("host_enqueue_s", *m.host_enqueue_s);
  if (!m.copy_level_us.empty()) {
    // Per rank: [before, after] the timed batches; null where the rank has none.
    w.key("copy_level_us").begin_array();
    for (std::size_t i = 0; i + 1 < m.copy_level_us.size(); i += 2) {
      w.begin_array();
      for (double us : {m.copy_level_us[i], m.copy_level_us[i + 1]})
        if (us > 0) w.value(us); else w.null();
      w.end_array();
    }
    w.end_array();
  }
  // The harness's reading, or an ingested one (the OSU-method program reads its CPU pair).
  if (m.activity) {
    w.key("host_activity");
    write_host_activity(w, *m.activity);
  }
  w.end_object();
  if (m.harnessed) write_cost(w, m.cost);
  w.key("stats").begin_object();
  w.field("min_s", s.min).field("p5_s", s.p5).field("median_s", s.median).field("mean_s", s.mean);
  w.field("p95_s", s.p95).field("p99_s", s.p99).field("max_s", s.max);
  w.field("stddev_s", s.stddev).field("cv", s.cv);
  w.end_object();
  w.field("samples_s", m.samples);
  if (m.soak_s > 0) {
    w.key("soak").begin_object();
    w.field("duration_s", m.soak_s);
    w.field("iterations", static_cast<std::int64_t>(m.samples.size()));
    w.field("capped", m.soak_capped);
    w.field("start_s", m.sample_starts);  // when each sample of samples_s began, from the soak's start
    w.end_object();
  }
  // Bandwidth from the median, so one slow outlier or a bimodal tail cannot move it.
  const double bw = gbps(a.bytes_per_op, s.median);
  w.field("bandwidth_gbps", bw);
  w.field("latency_us", s.median * 1e6);
  if (!a.latency_includes.empty()) w.field("latency_includes", a.latency_includes);
  if (peak.applies) {
    w.key("peak").begin_object();
    if (peak.gbps > 0) {
      w.field("gbps", peak.gbps);
      w.field("source", peak.source);
      // A collective's algbw understates what each link carried once n > 2; busbw is the figure that
      // compares with a link (nccl-tests' definition), so its fraction is the busbw's.
      const double compared = a.collective ? bw * a.collective->bus_factor : bw;
      w.field("fraction", compared / peak.gbps);
    } else {
      // Unknown or cache-resident: no number to divide by, so no fraction can exceed 1 by accident.
      w.key("gbps").null();
      w.field("unknown", peak.unknown);
    }
    w.end_object();
  }
  if (a.collective) {
    const double buffer = a.buffer_bytes > 0 ? a.buffer_bytes : a.bytes_per_op;
    w.key("collective").begin_object();
    w.field("operation", a.collective->operation);
    w.field("algbw_gbps", bw);
    w.field("bus_factor", a.collective->bus_factor);
    w.field("busbw_gbps", bw * a.collective->bus_factor);
    w.field("goodput_gbps", gbps(buffer, s.median));
    if (const auto& e = facts.expected) {
      // What the node's links allow for this collective's goodput (the study's definition).
      w.key("expected").begin_object();
      w.key("goodput_gbps");
      if (e->gbps > 0) w.value(e->gbps); else w.null();
      w.field(e->gbps > 0 ? "source" : "unknown", e->text);
      if (e->gbps > 0) w.field("fraction", gbps(buffer, s.median) / e->gbps);
      w.end_object();
    }
    // Both definitions, named: ours (the slowest rank per iteration, as the GPU studies and
    // nccl-tests take it) and OSU's (each rank's mean, averaged over ranks), so a comparison with
    // osu_allreduce & co. compares like with like.
    w.field("max_over_ranks_latency_us", s.median * 1e6);
    if (m.rank_mean_s) w.field("osu_avg_latency_us", *m.rank_mean_s * 1e6);
    w.end_object();
  }
  w.key("verified").begin_object();
  w.field("ok", m.verification.ok);
  w.field("bytes_checked", static_cast<std::uint64_t>(m.verification.bytes_checked));
  w.field("method", to_string(m.verification.method));
  w.end_object();
  if (wire) {
    w.key("wire");
    write_wire(w, *wire);
  }
  w.end_object();
  return w.str();
}

std::string stability_record(const PointId& id, const Stability& st, double confirm_s) {
  JsonWriter w;
  w.begin_object();
  w.field("type", "stability");
  w.field("point", point_key(id));
  w.field("benchmark", id.info.key);
  write_size_and_ranks(w, id);
  w.key("stability").begin_object();
  w.field("verdict", to_string(st.verdict));
  if (st.verdict == Repeatability::Unchecked) {
    w.field("why", st.why.empty() ? std::string("no confirmation batch ran") : st.why);
  } else {
    w.field("passes_median_s", std::vector<double>{st.first_median_s, st.confirm_median_s});
    w.field("spread", st.first_median_s > 0 ? std::fabs(st.confirm_median_s / st.first_median_s - 1) : 0.0);
    w.field("tolerance", st.tolerance);
    w.field("confirm_samples", st.confirm_samples);
    w.field("separation_s", st.separation_s);
    if (st.activity) {
      w.key("host_activity");  // the confirmation batch's; the result's timing has its own batches'
      write_host_activity(w, *st.activity);
    }
  }
  w.end_object();
  w.key("confirm_s").fixed(confirm_s, 6);  // the confirmation's wall time (re-warm, batch, check)
  w.end_object();
  return w.str();
}

std::string skip_record(const PointId& id, const std::string& reason) {
  JsonWriter w;
  w.begin_object();
  write_identity(w, "skip", id);
  w.field("reason", reason);
  w.end_object();
  return w.str();
}

std::string error_record(const PointId& id, const std::string& message, const WireCheck* wire) {
  JsonWriter w;
  w.begin_object();
  write_identity(w, "error", id);
  w.field("message", message);
  if (wire) {
    w.key("wire");
    write_wire(w, *wire);
  }
  w.end_object();
  return w.str();
}

}  // namespace commatlas
