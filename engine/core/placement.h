// Where the ranks of a job run: each rank's node, and the batch system's facts about the job.
//
// Rank 0 writes every record, so it must know every rank's node: the group gathers them once at
// start (Group::rank_nodes). A record of a multi-rank point says which nodes its ranks were on and
// whether they share one; under Slurm, which job and step it was.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"

namespace commatlas {

struct JobFacts {
  std::string scheduler;                      // "slurm"; empty when not under a batch system
  std::map<std::string, std::string> fields;  // job_id, step_id, nodelist, nnodes, ntasks, ...
};

struct Placement {
  std::vector<std::string> nodes;      // per rank, in rank order
  JobFacts job;
  std::vector<std::string> rank_nics;  // per rank, encoded (topology/nics.h); rank 0 only
  // Per rank, the CPUs its measuring thread may run on when the run starts (its affinity, as
  // cpu_list writes it; in an MPI job one CPU of the rank's block, core/affinity.h);
  // rank 0 only. A launcher that binds each rank to one core writes one number per rank, one that
  // does not the whole machine; on an H100 VM a 1-byte ping-pong moved 8-13% between passes bound
  // and up to 62% unbound (results/nvidia-h100-x1/harness-check/binding).
  std::vector<std::string> rank_cpus;
  // The last-level cache of rank 0's host in bytes (0: unknown): a working set within it makes a
  // host figure a cache figure (the node's facts, core/node_facts.h).
  std::uint64_t cpu_cache_bytes = 0;
};

// "0-3,8,10-11": CPU numbers, ascending runs joined (the kernel's cpulist format).
std::string cpu_list(std::vector<int> cpus);
// The CPUs this process may run on now (sched_getaffinity), as cpu_list writes them.
std::string this_process_cpus();

// Index of rank's node among the distinct node names, in order of first appearance.
int node_index(const std::vector<std::string>& rank_nodes, int rank);
int node_count(const std::vector<std::string>& rank_nodes);

// True when the given ranks (every rank when `ranks` is empty) run on one node.
bool same_node(const std::vector<std::string>& rank_nodes, const std::vector<int>& ranks = {});

// Slurm's facts about the job this process runs in, from its environment; empty outside Slurm.
// `env` maps a variable name to its value (nullopt when unset), so tests need no environment.
JobFacts job_facts(const std::map<std::string, std::string>& env);
JobFacts job_facts_from_environment();

// "placement": {"nodes": [...], "node_count": N, "same_node": bool, "cpus": [...], "job": {...}}
void write_placement(JsonWriter& w, const Placement& p);

}  // namespace commatlas
