// The topology's answers for the runner (core/node_facts.h): which NIC a rank uses, the peak of a
// path between nodes (the slower NIC of its ends), and a collective's expected goodput.
#include "core/node_facts.h"

#include <algorithm>

#include "core/context.h"
#include "topology/goodput.h"
#include "topology/nics.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

// GPUs taking part in a point: its ranks, or the GPUs one process drives (nccl.single.*).
int participants(const Params& params, int ranks) {
  if (ranks > 1) return ranks;
  if (!params.has("gpus")) return ranks;
  std::string gpus;
  try {
    gpus = params.text("gpus");
  } catch (const std::exception&) {
    return ranks;
  }
  if (gpus.empty()) return ranks;
  return static_cast<int>(std::count(gpus.begin(), gpus.end(), ',')) + 1;
}

bool on_gpu_buffers(Interface i) {
  return i == Interface::Nccl || i == Interface::MpiGpuAware || i == Interface::MpiStaged || i == Interface::CudaIpc;
}

}  // namespace

class TopologyNodeFacts final : public NodeFactsHook {
 public:
  std::string local_nic(const Context& ctx) const override {
    const Topology& topo = gpu_topology();
    std::optional<int> gpu;
    if (!topo.gpus.empty()) gpu = ctx.group.local_rank() % static_cast<int>(topo.gpus.size());
    const NodeNics& node = node_nics();
    return encode_nic(nic_for_rank(node.nics, node.gpu_nics, gpu));
  }

  void annotate(const BenchmarkInfo& info, const Params& params, int ranks, const Placement& placement,
                Measurement& m, PeakAnswer& answer) const override {
    const bool spans_nodes = ranks > 1 && !same_node(placement.nodes);
    if (spans_nodes && (info.category == Category::PointToPoint || info.category == Category::Collective)) {
      // The path leaves the node: its peak is the slowest NIC any rank sends through.
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
      // The one-node answer (an NVLink or PCIe pair) would be wrong here: the NIC decides.
      answer.applies = true;
      answer.cache_resident = false;
      if (peak) {
        // A bidirectional figure sums both directions of the slower NIC.
        const double directions = m.movement_direction_bi ? 2 : 1;
        answer.gbps = peak->gbps * directions;
        answer.source = peak->source + (directions > 1 ? ", both directions" : "");
        answer.unknown.clear();
      } else {
        answer.gbps = 0;
        answer.source.clear();
        answer.unknown = why;
      }
    }
    if (info.category != Category::Collective || !m.accounting.collective) return;
    m.has_expected = true;
    if (spans_nodes) {
      m.expected_text = "no expected goodput: the ranks span " + std::to_string(node_count(placement.nodes)) +
                        " nodes (the link graph is one node's)";
    } else if (!on_gpu_buffers(info.interface)) {
      m.expected_text = "no expected goodput: host buffers (the link graph is the GPUs')";
    } else {
      const ExpectedAnswer e = expected_goodput_for(m.accounting.collective->operation, participants(params, ranks),
                                                    link_graph_of(gpu_topology()));
      m.expected_gbps = e.gbps.value_or(0);
      m.expected_text = e.text;
    }
  }
};

const NodeFactsHook& topology_node_facts() {
  static const TopologyNodeFacts facts;
  return facts;
}

}  // namespace commatlas
