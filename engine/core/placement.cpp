#include "core/placement.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace commatlas {

int node_index(const std::vector<std::string>& rank_nodes, int rank) {
  std::vector<std::string> seen;
  for (int r = 0; r < static_cast<int>(rank_nodes.size()); ++r) {
    auto it = std::find(seen.begin(), seen.end(), rank_nodes[r]);
    const int index = static_cast<int>(it - seen.begin());
    if (it == seen.end()) seen.push_back(rank_nodes[r]);
    if (r == rank) return index;
  }
  return 0;
}

int node_count(const std::vector<std::string>& rank_nodes) {
  std::vector<std::string> sorted = rank_nodes;
  std::sort(sorted.begin(), sorted.end());
  return static_cast<int>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
}

bool same_node(const std::vector<std::string>& rank_nodes, const std::vector<int>& ranks) {
  if (rank_nodes.empty()) return true;
  if (ranks.empty()) return node_count(rank_nodes) <= 1;
  const int n = static_cast<int>(rank_nodes.size());
  for (int r : ranks)
    if (r >= 0 && r < n && ranks[0] >= 0 && ranks[0] < n && rank_nodes[r] != rank_nodes[ranks[0]]) return false;
  return true;
}

namespace {

// Slurm variables worth keeping with a record, under the name the record gives them.
constexpr std::pair<const char*, const char*> kSlurmFields[] = {
    {"SLURM_JOB_ID", "job_id"},         {"SLURM_STEP_ID", "step_id"},          {"SLURM_JOB_NAME", "job_name"},
    {"SLURM_JOB_NODELIST", "nodelist"}, {"SLURM_JOB_NUM_NODES", "nnodes"},     {"SLURM_NTASKS", "ntasks"},
    {"SLURM_STEP_NUM_TASKS", "step_tasks"}, {"SLURM_TASKS_PER_NODE", "tasks_per_node"},
    {"SLURM_JOB_PARTITION", "partition"}, {"SLURM_CLUSTER_NAME", "cluster"}, {"SLURM_MPI_TYPE", "mpi"},
};

}  // namespace

JobFacts job_facts(const std::map<std::string, std::string>& env) {
  JobFacts facts;
  if (!env.count("SLURM_JOB_ID")) return facts;
  facts.scheduler = "slurm";
  for (const auto& [var, name] : kSlurmFields) {
    auto it = env.find(var);
    if (it != env.end()) facts.fields[name] = it->second;
  }
  return facts;
}

JobFacts job_facts_from_environment() {
  std::map<std::string, std::string> env;
  for (const auto& [var, name] : kSlurmFields) {
    (void)name;
    if (const char* v = std::getenv(var)) env[var] = v;
  }
  return job_facts(env);
}

std::string cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string this_process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "";  // unknown: the record leaves it empty
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpu_list(cpus);
}

void write_placement(JsonWriter& w, const Placement& p) {
  w.key("placement").begin_object();
  w.key("nodes").begin_array();
  for (const std::string& n : p.nodes) w.value(n);
  w.end_array();
  w.field("node_count", node_count(p.nodes));
  w.field("same_node", same_node(p.nodes));
  if (p.rank_cpus.size() == p.nodes.size()) {
    w.key("cpus").begin_array();
    for (const std::string& c : p.rank_cpus) w.value(c);
    w.end_array();
  }
  if (!p.job.scheduler.empty()) {
    w.key("job").begin_object();
    w.field("scheduler", p.job.scheduler);
    for (const auto& [k, v] : p.job.fields) w.field(k, v);
    w.end_object();
  }
  w.end_object();
}

}  // namespace commatlas
