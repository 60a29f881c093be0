// The goodput a node's link graph allows for a collective, as the Alps/Leonardo/LUMI study defines
// it (goodput = buffer bytes / time): pure functions of a graph, tested on the study's nodes.
//
// The graph's vertices are GPUs and switches (an NVSwitch forwards without limit); an edge is a
// bundle of parallel links between two vertices, each link carrying `link_gbps` per direction.
//
// Alltoall: every ordered GPU pair is routed over all its shortest paths (split evenly over them
// and over a bundle's parallel links). The edge forwarding index is the most routes crossing one
// connection between two vertices; a pair's expected goodput is a link's bandwidth over the most
// routes on one link, and a GPU's is that times the streams it can drive at once: one per peer,
// at most one per link it has (LUMI: 7 peers, 6 links).
// Allreduce: on a fully connected node (every GPU pair linked, or all on one switch) the sum of a
// GPU's outgoing link bandwidth; otherwise the edge-disjoint Hamiltonian rings of the graph, each
// run both ways at its slowest link's rate, halved because Rabenseifner sends the buffer twice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace commatlas {

struct LinkBundle {
  int a = 0, b = 0;      // vertices: GPUs are 0..gpus-1, switches follow
  int links = 1;
  double link_gbps = 0;  // per link, per direction (1e9 B/s)
};

struct LinkGraph {
  int gpus = 0;
  int switches = 0;
  std::vector<LinkBundle> bundles;
  std::string source;  // where the links came from, for the record's "how"
};

struct ExpectedGoodput {
  double gpu_gbps = 0;          // per GPU: what its links can carry for the collective
  // Goodput (buffer bytes / time) those links allow. Alltoall: 1/n of each GPU's buffer is its own
  // block and crosses no link, so the buffer can go n/(n-1) times as fast as the links carry (2x H100:
  // NCCL moved 634 GB/s of 4 GiB buffers where the links carry 478); allreduce: gpu_gbps.
  double buffer_gbps = 0;
  double pair_gbps = 0;         // alltoall: per GPU pair
  double forwarding_index = 0;  // alltoall: most routes on one connection; allreduce: 0
  int rings = 0;                // allreduce on a node that is not fully connected
  std::string how;              // one line: the arithmetic
};

// nullopt with `why` when the graph cannot answer (no links, disconnected, too many GPUs to search).
std::optional<ExpectedGoodput> expected_alltoall(const LinkGraph& g, std::string* why = nullptr);
std::optional<ExpectedGoodput> expected_allreduce(const LinkGraph& g, std::string* why = nullptr);

// The node's NVLink graph from the topology: GPU-to-GPU bundles, or one NVSwitch every GPU links to.
// Empty (gpus = 0) when the GPUs have no NVLink.
LinkGraph link_graph_of(const Topology& topo);

// What a collective record carries: "expected": {"gbps": ..., "source": ...} or {"gbps": null,
// "unknown": why}. `operation` is the collective's record name ("allreduce", "alltoall", ...); only
// allreduce and alltoall have a study definition, the others are unknown with that reason.
struct ExpectedAnswer {
  std::optional<double> gbps;
  std::string text;  // the source, or why unknown
};
ExpectedAnswer expected_goodput_for(const std::string& operation, int ranks, const LinkGraph& g);

}  // namespace commatlas
