// What the node says about a measured point, asked in one place: the theoretical peak of the
// movement's path (one node's memory or link, or the NIC when the ranks span nodes) and a
// collective's expected goodput, both from (movement, bytes, placement). The runner asks it for
// every result and hands the answer to the record; topology/ answers (main.cpp passes it in), so
// core does not depend on topology/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/context.h"
#include "core/movement.h"
#include "core/placement.h"

namespace commatlas {

// The theoretical peak a result is compared with, or why there is none. `applies` is false where
// no bandwidth is claimed (latency chases, the harness): such records carry no peak at all.
struct PeakAnswer {
  bool applies = false;
  double gbps = 0;       // 0: unknown, see `unknown`
  std::string source;    // where gbps comes from
  std::string unknown;   // why there is no peak (cache-resident, no DRAM peak, inter-node, ...)
  bool cache_resident = false;
};

// The goodput a collective's buffers can reach over the node's link graph (topology/goodput.h).
struct Expectation {
  double gbps = 0;   // 0: unknown, `text` says why
  std::string text;  // the source of gbps, or why there is none
};

struct PointFacts {
  PeakAnswer peak;
  std::optional<Expectation> expected;  // collectives only
};

class NodeFacts {
 public:
  virtual ~NodeFacts() = default;
  // This rank's NIC as one line (topology/nics.h encode_nic); empty when it has none.
  virtual std::string local_nic(const Context& ctx) const = 0;
  // On rank 0, for a point measured at `bytes`: `movement` as its record declares it (nodes and
  // same_node filled by the runner), `placement` the job's ranks, nodes, NICs and host cache.
  virtual PointFacts facts(const Movement& movement, std::uint64_t bytes, const Placement& placement) const = 0;
};

}  // namespace commatlas
