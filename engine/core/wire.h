// The hardware as a second witness: bytes the GPUs' own link counters saw, beside the bytes a
// point claims.
//
// The data check proves that the destination holds what a batch wrote; it cannot tell which link
// carried it. At a variant's first point, once its first op and probe have sized a sample and
// before the warm-up (core/harness.h, BeforeWarmup), the runner asks witness_wire() for an untimed
// pass of the same workload, with the traffic counters of the GPUs on its route read before and
// after. A route crosses NVLink or PCIe (the topology says which, from the movement); the
// counters of that link must have seen at least half the claimed bytes. Other traffic can only add
// to a counter, so a count far below the claim, or the bytes showing up on the other link, is a
// failed check: the point becomes an error record, like a failed data check.
//
// Core sees only the WireWitness interface; reading the counters (NVML field values) and deciding a
// movement's route (the node's links) live in topology/, which registers the witness.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"
#include "core/context.h"
#include "core/harness.h"
#include "core/json.h"
#include "core/movement.h"

namespace commatlas {

enum class WireLink { Nvlink, Pcie };
std::string to_string(WireLink link);

// One link class of one GPU: cumulative counters at a moment, or what they gained over a pass.
struct WireCounter {
  bool readable = false;
  std::string why;  // when not readable: what NVML answered
  double tx_bytes = 0, rx_bytes = 0;
  // The counter wraps after this many bytes (a 32-bit field); 0: 64 bits, no wrap within a run.
  double wrap_bytes = 0;
  struct Link {
    int id = 0;
    double tx_bytes = 0, rx_bytes = 0;
  };
  std::vector<Link> links;  // NVLink: each active link (their sum is the total)
};

struct GpuWire {
  int gpu = 0;
  WireCounter nvlink, pcie;
  const WireCounter& of(WireLink link) const { return link == WireLink::Nvlink ? nvlink : pcie; }
};

// Which counters a movement's bytes must show up on.
struct WireRoute {
  bool applies = false;     // false: the point crosses no GPU link it declares bytes for; no record field
  std::string not_judged;   // applies, but cannot be judged here: why
  WireLink link = WireLink::Nvlink;
  std::vector<int> gpus;    // the GPUs whose counters see the bytes
  // One end is host memory: every byte crosses the one GPU's PCIe counter once (tx or rx). Between
  // GPUs every byte is counted twice, as one GPU's tx and another's rx.
  bool host_end = false;
  std::string path;         // "GPU 0 <-> GPU 1 over NVLink", for the record
};

enum class WireVerdict { Ok, Failed, Unreadable, NotJudged };
std::string to_string(WireVerdict v);

struct WireCheck {
  std::string source;       // where the counts come from
  WireRoute route;
  WireVerdict verdict = WireVerdict::NotJudged;
  std::string detail;       // one sentence: what the counters showed, or why there is no judgement
  double claimed_bytes = 0; // bytes the pass moved by the point's own accounting (0: no pass ran)
  std::optional<double> observed_bytes;    // on the route's link
  std::optional<double> other_link_bytes;  // on the other link class, where readable (GPU pairs)
  std::vector<GpuWire> counted;            // per GPU, what each counter gained over the pass
  double pass_s = 0;        // wall time of the pass
  double settle_s = 0;      // waited after the pass for the counters to catch up
};

// Below this many claimed bytes a pass is not judged: a KiB-grained counter and the traffic every
// GPU sees (doorbells, event polls) would weigh too much against it.
inline constexpr double kWireMinClaimBytes = 1 << 20;
// A pass moves about this many bytes, within kWirePassSeconds of the point's own per-op time.
inline constexpr double kWirePassBytes = 256.0 * (1 << 20);
inline constexpr double kWirePassSeconds = 0.01;
// Rereads of the counters, 5 ms apart, while a check fails for want of counted bytes.
inline constexpr int kWireMaxRereads = 20;
// The share of the claimed bytes the route's counters must show.
inline constexpr double kWireMinShare = 0.5;

class WireWitness {
 public:
  virtual ~WireWitness() = default;
  virtual std::string source() const = 0;
  // The route of a movement's bytes (asked on rank 0, which knows every rank's GPU).
  virtual WireRoute route(const Movement& movement) const = 0;
  // Why no counter can be read at all (no NVML, AMD); nullopt when reading is worth trying.
  virtual std::optional<std::string> unavailable() const = 0;
  // Cumulative counters of these GPUs now; a class NVML cannot read says why.
  virtual std::vector<GpuWire> read(const std::vector<int>& gpus) = 0;
};

// Counters gained from `before` to `after` (wraps undone; a counter that went back is unreadable).
GpuWire wire_difference(const GpuWire& before, const GpuWire& after);

// The judgement of a pass that claimed `claimed_bytes` and whose counters gained `counted`.
WireCheck judge_wire(const WireRoute& route, double claimed_bytes, const std::vector<GpuWire>& counted);

// How many times one op of the movement carries its bytes_per_op over the route: twice for a
// ping-pong (a round trip, the message once each way, bytes_per_op being one message), else once.
int wire_crossings_per_op(const Movement& movement);

// Runs the witness pass of a point on every rank (rank 0 reads the counters), sized on `m`'s
// seconds_per_op and ops_per_sample (the probe's estimate, where the runner asks), and returns the
// check on every rank (other ranks get the verdict only); nullopt where no witness is registered or
// the route does not apply. `witness` null: the registered one.
std::optional<WireCheck> witness_wire(Workload& workload, Context& ctx, const Movement& movement,
                                      const Measurement& m, WireWitness* witness = nullptr);

// The record's "wire" object.
void write_wire(JsonWriter& w, const WireCheck& check);

// The witness of this process: topology/ registers a factory (called on first use); tests replace
// it with set_wire_witness (null restores the registered one). Returns the previous override.
using WireWitnessFactory = std::unique_ptr<WireWitness> (*)();
bool set_wire_witness_factory(WireWitnessFactory factory);
WireWitness* set_wire_witness(WireWitness* witness);
WireWitness* registered_wire_witness();

}  // namespace commatlas
