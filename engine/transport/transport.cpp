#include "transport/transport.h"

#include <utility>

#include "core/error.h"

namespace commatlas {
namespace {

// Transports and families meet here whichever static initialiser runs first: each new one is
// paired with every one of the other kind already registered.
struct TransportTable {
  std::vector<std::shared_ptr<const TransportSpec>> transports;
  std::vector<TransportFamily> families;
};

TransportTable& table() {
  static TransportTable t;
  return t;
}

[[noreturn]] void no_patterns(const Transport& t) {
  throw MeasurementError("a pattern asked " + t.describe() + " for something only a transport with patterns has");
}

}  // namespace

void* Transport::send_home() { no_patterns(*this); }
void* Transport::recv_home() { no_patterns(*this); }
void* Transport::allocate(std::size_t) { no_patterns(*this); }
void Transport::upload(void*, const void*, std::size_t) { no_patterns(*this); }
void Transport::download(void*, const void*, std::size_t) { no_patterns(*this); }
void Transport::fill(void*, unsigned char, std::size_t) { no_patterns(*this); }
void Transport::pack(const HaloGeometry&, const double*, void*) { no_patterns(*this); }
void Transport::unpack(const HaloGeometry&, const void*, double*) { no_patterns(*this); }
void Transport::exchange(const std::vector<PeerMessage>&, const std::vector<PeerMessage>&) { no_patterns(*this); }
void Transport::exchange_counts(const std::vector<PeerMessage>&, const std::vector<std::uint64_t>&,
                                const std::vector<PeerMessage>&, std::vector<std::uint64_t>&) {
  no_patterns(*this);
}
void Transport::allreduce(const float*, float*, std::size_t) { no_patterns(*this); }

bool register_transport(TransportSpec spec) {
  auto shared = std::make_shared<const TransportSpec>(std::move(spec));
  table().transports.push_back(shared);
  for (TransportFamily family : table().families) family(shared);
  return true;
}

bool register_transport_family(TransportFamily family) {
  table().families.push_back(family);
  for (const auto& spec : table().transports) family(spec);
  return true;
}

// In the order of Protocol's values.
struct ProtocolNames {
  const char* name;
  const char* direction;
};
constexpr ProtocolNames kNames[] = {{"pingpong", "half_round_trip"}, {"bandwidth", "uni"}, {"bibw", "bi"}};

const char* protocol_name(Protocol protocol) { return kNames[static_cast<int>(protocol)].name; }

Metric protocol_metric(Protocol protocol) { return protocol == Protocol::PingPong ? Metric::Latency : Metric::Bandwidth; }

const char* p2p_direction(Protocol protocol) { return kNames[static_cast<int>(protocol)].direction; }

Movement p2p_movement(Protocol protocol, Mechanism mechanism, Endpoint from, Endpoint to) {
  from.rank = kOriginEnd;
  to.rank = kPeerEnd;
  switch (protocol) {
    case Protocol::PingPong:
      return movement_between(Operation::PingPong, MoveDirection::HalfRoundTrip, mechanism, from, to);
    case Protocol::Bandwidth: return movement_between(Operation::SendRecv, MoveDirection::Uni, mechanism, from, to);
    case Protocol::Bibw: return movement_between(Operation::SendRecv, MoveDirection::Bi, mechanism, from, to);
  }
  return movement_between(Operation::SendRecv, MoveDirection::Uni, mechanism, from, to);
}

double p2p_bytes_per_op(Protocol protocol, std::uint64_t bytes, int window_messages) {
  const double b = static_cast<double>(bytes);
  switch (protocol) {
    case Protocol::PingPong: return b;
    case Protocol::Bandwidth: return window_messages * b;
    case Protocol::Bibw: return 2.0 * window_messages * b;
  }
  return 0;
}

}  // namespace commatlas
