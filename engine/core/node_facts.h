// What the runner asks the topology about each point, without core depending on topology/: the NIC
// this rank would use (gathered to rank 0 once), and the facts a measured point gets from the node
// (inter-node peak, expected collective goodput). main.cpp hands in the topology's answerer.
#pragma once

#include <string>

#include "core/benchmark.h"
#include "core/harness.h"
#include "core/movement.h"
#include "core/placement.h"

namespace commatlas {

class NodeFactsHook {
 public:
  virtual ~NodeFactsHook() = default;
  // This rank's NIC as one line (topology/nics.h encode_nic); empty when it has none.
  virtual std::string local_nic(const Context& ctx) const = 0;
  // On rank 0, after a point was measured: the peak of a path between nodes (it replaces the
  // movement's one-node answer in `peak`), and a collective's expected goodput.
  virtual void annotate(const BenchmarkInfo& info, const Params& params, int ranks, const Placement& placement,
                        Measurement& m, PeakAnswer& peak) const = 0;
};

}  // namespace commatlas
