#include "core/host_activity.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/group.h"
#include "core/json.h"

namespace commatlas {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The "cpu" lines of /proc/stat, which come first: the rest (interrupt counts) can run to
// kilobytes and is not read.
std::string read_cpu_lines() {
  std::ifstream in("/proc/stat");
  std::string text, line;
  while (std::getline(in, line) && line.rfind("cpu", 0) == 0) text += line + '\n';
  return text;
}

double tick_s() { return 1.0 / static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK))); }

void write_counters(JsonWriter& w, const HostActivity& a) {
  w.field("cpu_ticks", a.cpu_ticks);
  w.key("steal_share");
  if (a.steal_share) w.value(*a.steal_share); else w.null();
  w.key("others_share");
  if (a.others_share) w.value(*a.others_share); else w.null();
  w.field("steal_cpus", a.steal_cpus);
  w.field("most_stolen_cpu_s", a.most_stolen_cpu_s);
  w.field("involuntary_switches", a.involuntary_switches);
  w.field("page_faults", a.page_faults);
}

}  // namespace

std::optional<CpuTicks> parse_cpu_ticks(const std::string& proc_stat) {
  std::istringstream line(proc_stat.substr(0, proc_stat.find('\n')));
  std::string label;
  line >> label;
  if (label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice, so it is not added again.
  std::vector<std::int64_t> f;
  std::int64_t v = 0;
  while (f.size() < 8 && line >> v) f.push_back(v);
  if (f.size() < 8) return std::nullopt;
  CpuTicks t;
  t.busy = f[0] + f[1] + f[2] + f[5] + f[6];
  t.idle = f[3] + f[4];
  t.steal = f[7];
  return t;
}

std::vector<std::int64_t> parse_cpu_steal(const std::string& proc_stat) {
  std::vector<std::int64_t> steal;
  std::istringstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] == ' ') continue;  // "cpu  ": the node's
    std::istringstream fields(line);
    std::string label;
    std::int64_t f[8] = {};
    fields >> label;
    int n = 0;
    while (n < 8 && fields >> f[n]) ++n;
    if (n == 8) steal.push_back(f[7]);
  }
  return steal;
}

HostSample sample_host() {
  HostSample h;
  const std::string cpu_lines = read_cpu_lines();
  h.ticks = parse_cpu_ticks(cpu_lines);
  h.cpu_steal = parse_cpu_steal(cpu_lines);
  h.at_s = now_s();
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    auto us = [](const timeval& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000 + t.tv_usec; };
    h.own_cpu_us = us(u.ru_utime) + us(u.ru_stime);
    h.switches = u.ru_nivcsw;
    h.faults = u.ru_minflt + u.ru_majflt;
  }
  return h;
}

HostActivity activity_between(const HostSample& begin, const HostSample& end, std::int64_t job_cpu_us,
                              std::int64_t job_switches, std::int64_t job_faults, bool single_node) {
  HostActivity a;
  a.window_s = end.at_s - begin.at_s;
  a.involuntary_switches = job_switches;
  a.page_faults = job_faults;
  if (begin.cpu_steal.size() == end.cpu_steal.size()) {
    std::int64_t most = 0;
    for (std::size_t c = 0; c < end.cpu_steal.size(); ++c) {
      const std::int64_t d = end.cpu_steal[c] - begin.cpu_steal[c];
      if (d >= 2) ++a.steal_cpus;
      most = std::max(most, d - 1);
    }
    a.most_stolen_cpu_s = static_cast<double>(std::max<std::int64_t>(most, 0)) * tick_s();
  }
  if (!begin.ticks || !end.ticks) return a;
  const std::int64_t total = end.ticks->total() - begin.ticks->total();
  a.cpu_ticks = total;
  if (total < kMinTicksForShares) return a;
  a.steal_share = static_cast<double>(end.ticks->steal - begin.ticks->steal) / static_cast<double>(total);
  if (single_node) {
    // Busy ticks are every process's, this job's included: its own CPU time (exact) comes off.
    const double busy_s = static_cast<double>(end.ticks->busy - begin.ticks->busy) * tick_s();
    const double others_s = std::max(0.0, busy_s - static_cast<double>(job_cpu_us) * 1e-6);
    a.others_share = std::min(1.0, others_s / (static_cast<double>(total) * tick_s()));
  }
  return a;
}

HostActivity HostActivityWindow::close(Group& group, bool single_node) const {
  const HostSample end = sample_host();
  // Every rank takes part in each sum; the node's ticks are rank 0's, whose process writes the record.
  const std::int64_t cpu_us = group.sum(end.own_cpu_us - begin_.own_cpu_us);
  const std::int64_t switches = group.sum(end.switches - begin_.switches);
  const std::int64_t faults = group.sum(end.faults - begin_.faults);
  HostActivity a = activity_between(begin_, end, cpu_us, switches, faults, single_node);
  // After the sums, which bring the ranks together: the pair's two sides arrive close in time.
  a.cpu_pair = cpu_pair_round_trip(group);
  return a;
}

void write_host_activity(JsonWriter& w, const HostActivity& a) {
  w.begin_object();
  w.field("window_s", a.window_s);
  if (a.counted) write_counters(w, a);
  w.key("cpu_pair");
  if (a.cpu_pair) {
    w.begin_object();
    w.key("cpus");
    w.begin_array();
    w.value(static_cast<std::int64_t>(a.cpu_pair->cpu_a));
    w.value(static_cast<std::int64_t>(a.cpu_pair->cpu_b));
    w.end_array();
    w.field("round_trip_ns", a.cpu_pair->round_trip_ns);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
}

}  // namespace commatlas
