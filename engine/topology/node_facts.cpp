// The node's facts about a measured point (core/node_facts.h), in one function of (movement,
// bytes, placement): the peak of its path (topology/movement_peak.cpp for one node, the slower NIC
// of its ends between nodes) and a collective's expected goodput over the link graph.
#include "core/node_facts.h"

#include "core/context.h"
#include "topology/goodput.h"
#include "topology/nics.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

// The NIC's answer for a path between nodes: the slowest NIC any rank sends through; the one-node
// answer (an NVLink or PCIe pair) would be wrong there.
PeakAnswer internode_answer(const Movement& movement, const Placement& placement) {
  std::optional<Nic> slow;
  std::string slow_node;
  std::string why;
  std::optional<Peak> peak;
  for (std::size_t r = 0; r < placement.nodes.size() && r < placement.rank_nics.size(); ++r) {
    const auto nic = decode_nic(placement.rank_nics[r]);
    if (r == 0) {
      slow = nic;
      slow_node = placement.nodes[r];
      continue;
    }
    peak = internode_peak(slow, slow_node, nic, placement.nodes[r], &why);
    if (!peak) break;
    if (nic && nic->rate_gbit < slow->rate_gbit) {
      slow = nic;
      slow_node = placement.nodes[r];
    }
  }
  PeakAnswer answer;
  answer.applies = true;
  if (peak) {
    // A bidirectional figure sums both directions of the slower NIC.
    const double directions = movement.direction == MoveDirection::Bi ? 2 : 1;
    answer.gbps = peak->gbps * directions;
    answer.source = peak->source + (directions > 1 ? ", both directions" : "");
  } else {
    answer.unknown = why;
  }
  return answer;
}

Expectation expected_answer(const Movement& movement, bool spans_nodes, const Placement& placement) {
  if (spans_nodes)
    return {0, "no expected goodput: the ranks span " + std::to_string(node_count(placement.nodes)) +
                   " nodes (the link graph is one node's)"};
  if (!movement.from || movement.from->memory != Memory::Gpu)
    return {0, "no expected goodput: host buffers (the link graph is the GPUs')"};
  const ExpectedAnswer e = expected_goodput_for(to_string(movement.operation), movement.participants.value_or(1),
                                                link_graph_of(gpu_topology()));
  return {e.gbps.value_or(0), e.text};
}

}  // namespace

class TopologyNodeFacts final : public NodeFacts {
 public:
  std::string local_nic(const Context& ctx) const override {
    const Topology& topo = gpu_topology();
    std::optional<int> gpu;
    if (!topo.gpus.empty()) gpu = ctx.group.local_rank() % static_cast<int>(topo.gpus.size());
    const NodeNics& node = node_nics();
    return encode_nic(nic_for_rank(node.nics, node.gpu_nics, gpu));
  }

  PointFacts facts(const Movement& movement, std::uint64_t bytes, const Placement& placement) const override {
    PointFacts f;
    f.peak = movement_peak(movement, bytes, placement.cpu_cache_bytes);
    // A bare reference loop is judged against the benchmark it checks, not against the node.
    if (!movement.reference_of.empty()) return f;
    const OperationKind kind = kind_of(movement.operation);
    const bool spans_nodes = placement.nodes.size() > 1 && !movement.same_node;
    if (spans_nodes && (kind == OperationKind::Message || kind == OperationKind::Collective))
      f.peak = internode_answer(movement, placement);
    if (kind == OperationKind::Collective) f.expected = expected_answer(movement, spans_nodes, placement);
    return f;
  }
};

const NodeFacts& topology_node_facts() {
  static const TopologyNodeFacts facts;
  return facts;
}

}  // namespace commatlas
