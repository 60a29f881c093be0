// What a GPU copy benchmark copies, as plain values: paths, directions, which GPU drives the
// copy, the SM kernel's shape, and the byte accounting (who copies: copy_initiator.h). No CUDA here, so the variant lists and
// the arithmetic are unit-tested on machines without a GPU (engine/tests/gpu_copy_plan_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/movement.h"
#include "core/params.h"

namespace commatlas::cuda {

enum class Path { H2D, D2H, D2D, Peer };
enum class Direction { Uni, Bi };       // bi: both directions at once, bytes summed
enum class Side { Src, Dst };           // the GPU that drives the copy: source (remote write) or destination (remote read)
enum class Fan { OneToAll, AllToOne };

inline std::string to_string(Path p) {
  switch (p) {
    case Path::H2D: return "h2d";
    case Path::D2H: return "d2h";
    case Path::D2D: return "d2d";
    case Path::Peer: return "peer";
  }
  return "?";
}
inline std::string to_string(Direction d) { return d == Direction::Uni ? "uni" : "bi"; }
inline std::string to_string(Side s) { return s == Side::Src ? "src" : "dst"; }
inline std::string to_string(Fan f) { return f == Fan::OneToAll ? "one_to_all" : "all_to_one"; }

template <typename E>
E parse_enum(const std::string& text, std::initializer_list<E> values, const char* what) {
  for (E v : values)
    if (to_string(v) == text) return v;
  throw UsageError(std::string("unknown ") + what + " '" + text + "'");
}

// How an SM copy/STREAM kernel is launched: 16-byte (uint4) or 4-byte accesses, independent
// loads in flight per thread, and blocks per SM of 256 threads each.
// Default {16, 4, 4}: on H200 (results/nvidia-h200-x2/gpu-suite) the best peer shape from both
// sides and within 0.5% of the best local one (16, 4, 2); 4-byte accesses or a single load in
// flight lose up to 3x on the local copy and on remote reads.
struct KernelShape {
  static constexpr int kThreadsPerBlock = 256;
  int vector_bytes = 16;
  int unroll = 4;
  int blocks_per_sm = 4;
  bool operator==(const KernelShape& o) const {
    return vector_bytes == o.vector_bytes && unroll == o.unroll && blocks_per_sm == o.blocks_per_sm;
  }
};

// Why a shape cannot be launched, or nullopt. 8 blocks of 256 threads fill an SM (2048 threads).
inline std::optional<std::string> shape_problem(const KernelShape& s) {
  if (s.vector_bytes != 4 && s.vector_bytes != 16)
    return "vector_bytes must be 4 or 16, got " + std::to_string(s.vector_bytes);
  if (s.unroll != 1 && s.unroll != 4) return "unroll must be 1 or 4, got " + std::to_string(s.unroll);
  if (s.blocks_per_sm < 1 || s.blocks_per_sm > 8)
    return "blocks_per_sm must be 1..8 (256 threads each), got " + std::to_string(s.blocks_per_sm);
  return std::nullopt;
}

inline void add_shape(Params& p, const KernelShape& s) {
  p.set("vector_bytes", std::int64_t{s.vector_bytes});
  p.set("unroll", std::int64_t{s.unroll});
  p.set("blocks_per_sm", std::int64_t{s.blocks_per_sm});
  p.set("threads_per_block", std::int64_t{KernelShape::kThreadsPerBlock});
}

inline KernelShape shape_from(const Params& p) {
  KernelShape s;
  s.vector_bytes = static_cast<int>(p.integer("vector_bytes"));
  s.unroll = static_cast<int>(p.integer("unroll"));
  s.blocks_per_sm = static_cast<int>(p.integer("blocks_per_sm"));
  if (auto problem = shape_problem(s)) throw UsageError("bad kernel shape: " + *problem);
  return s;
}

// A buffer a GPU benchmark makes: its allocator, the GPU that owns it (device allocators) or whose
// context allocates it (host ones), who writes it first (decides where managed pages land) and
// the managed advice. Not a place of the movement model: place_of below says where its bytes
// are, as the core Endpoint the record carries.
struct BufferSpec {
  Allocator allocator = Allocator::Device;
  int gpu = 0;
  std::string first_touch;  // "cpu" or "gpu"
  std::string hint;         // managed only: "" (none) or kHostPreferred
};

// Managed advice that keeps CPU-touched pages in host memory, mapped for the GPU: without it the
// first copy migrates the pages to the GPU and every later "h2d" copy is a copy inside HBM.
inline const std::string kHostPreferred = "preferred_location_host";

// Where the pages of a buffer are while copies run: GPU memory for device allocators and for
// GPU-touched managed memory without advice (nothing moves those pages back to the host).
inline bool resident_on_gpu(const BufferSpec& b) {
  return memory_of(b.allocator) == Memory::Gpu ||
         (b.allocator == Allocator::Managed && b.first_touch == "gpu" && b.hint.empty());
}

// One copy stream: src -> dst, driven by `exec_gpu` (whose stream/copy engine/SMs do the work).
struct Leg {
  BufferSpec src, dst;
  int exec_gpu = 0;
};

// A variant of gpu.copy_ce / gpu.copy_sm.
struct CopySpec {
  Path path = Path::D2D;
  Direction direction = Direction::Uni;
  Allocator host_allocator = Allocator::Pinned;    // h2d/d2h only: pinned, registered, pageable, managed
  Allocator device_allocator = Allocator::Device;  // device or device_pool
  std::string first_touch;                  // of the host-side buffer (h2d/d2h only)
  int src_gpu = 0, dst_gpu = 0;
  Side side = Side::Src;
};

inline Params to_params(const CopySpec& c) {
  Params p;
  p.set("path", to_string(c.path));
  p.set("direction", to_string(c.direction));
  if (c.path == Path::H2D || c.path == Path::D2H) {
    p.set("host_allocator", to_string(c.host_allocator));
    p.set("first_touch", c.first_touch);
    if (c.host_allocator == Allocator::Managed) {
      const std::string hint = c.first_touch == "cpu" ? kHostPreferred : "none";
      p.set("managed_hint", hint);
    }
  }
  p.set("device_allocator", to_string(c.device_allocator));
  p.set("src_gpu", std::int64_t{c.src_gpu});
  p.set("dst_gpu", std::int64_t{c.dst_gpu});
  p.set("engine_side", to_string(c.side));
  return p;
}

inline CopySpec copy_spec_from(const Params& p) {
  CopySpec c;
  c.path = parse_enum(p.text("path"), {Path::H2D, Path::D2H, Path::D2D, Path::Peer}, "path");
  c.direction = parse_enum(p.text("direction"), {Direction::Uni, Direction::Bi}, "direction");
  if (p.has("host_allocator")) c.host_allocator = parse_allocator(p.text("host_allocator"));
  if (p.has("first_touch")) c.first_touch = p.text("first_touch");
  c.device_allocator = parse_allocator(p.text("device_allocator"));
  c.src_gpu = static_cast<int>(p.integer("src_gpu"));
  c.dst_gpu = static_cast<int>(p.integer("dst_gpu"));
  c.side = parse_enum(p.text("engine_side"), {Side::Src, Side::Dst}, "engine_side");
  return c;
}

// The default sweep: allocators only for h2d/d2h, peer only for the pair 0 -> 1, bidirectional
// only where both directions share a resource worth measuring (the PCIe link, the NVLink pair).
inline std::vector<CopySpec> default_copy_specs(int gpus) {
  std::vector<CopySpec> out;
  if (gpus < 1) return out;
  struct HostCase {
    Allocator host_allocator;
    const char* touch;
    Allocator device_allocator;
  };
  const HostCase host_cases[] = {
      {Allocator::Pinned, "cpu", Allocator::Device},     {Allocator::Pinned, "cpu", Allocator::DevicePool},
      {Allocator::Registered, "cpu", Allocator::Device}, {Allocator::Pageable, "cpu", Allocator::Device},
      {Allocator::Managed, "cpu", Allocator::Device},    {Allocator::Managed, "gpu", Allocator::Device}};
  for (Path path : {Path::H2D, Path::D2H})
    for (const HostCase& h : host_cases) {
      CopySpec c;
      c.path = path;
      c.host_allocator = h.host_allocator;
      c.first_touch = h.touch;
      c.device_allocator = h.device_allocator;
      // The GPU is the only engine there is: it reads the host (h2d) or writes it (d2h).
      c.side = path == Path::H2D ? Side::Dst : Side::Src;
      out.push_back(c);
    }
  CopySpec both;  // h2d and d2h at once over the one PCIe link
  both.path = Path::H2D;
  both.direction = Direction::Bi;
  both.host_allocator = Allocator::Pinned;
  both.first_touch = "cpu";
  both.side = Side::Dst;
  out.push_back(both);
  for (Allocator dev : {Allocator::Device, Allocator::DevicePool}) {
    CopySpec c;
    c.path = Path::D2D;
    c.device_allocator = dev;
    out.push_back(c);
  }
  if (gpus >= 2)
    for (Direction d : {Direction::Uni, Direction::Bi})
      for (Side s : {Side::Src, Side::Dst}) {
        CopySpec c;
        c.path = Path::Peer;
        c.direction = d;
        c.src_gpu = 0;
        c.dst_gpu = 1;
        c.side = s;
        out.push_back(c);
      }
  return out;
}

// The host-side buffer of an h2d/d2h copy: CPU-touched managed memory is kept on the host by
// advice, so the copy crosses the host link; GPU-touched managed memory stays where it landed.
inline BufferSpec host_buffer(const CopySpec& c) {
  const std::string touch = c.first_touch.empty() ? "cpu" : c.first_touch;
  const int gpu = c.path == Path::D2H ? c.src_gpu : c.dst_gpu;
  return BufferSpec{c.host_allocator, gpu, touch,
                    c.host_allocator == Allocator::Managed && touch == "cpu" ? kHostPreferred : ""};
}

// The GPU whose engine runs a copy from src_gpu to dst_gpu.
inline int driving_gpu(int src_gpu, int dst_gpu, Side side) { return side == Side::Src ? src_gpu : dst_gpu; }

// The copies a variant runs at once. Bidirectional is the forward copy plus its mirror, each
// driven from the same side of its own direction.
inline std::vector<Leg> legs_of(const CopySpec& c) {
  const BufferSpec host = host_buffer(c);
  auto dev = [&](int g) { return BufferSpec{c.device_allocator, g, "gpu", ""}; };
  std::vector<Leg> legs;
  switch (c.path) {
    case Path::H2D:
      legs.push_back({host, dev(c.dst_gpu), c.dst_gpu});
      if (c.direction == Direction::Bi) legs.push_back({dev(c.dst_gpu), host, c.dst_gpu});
      break;
    case Path::D2H:
      legs.push_back({dev(c.src_gpu), host, c.src_gpu});
      if (c.direction == Direction::Bi) legs.push_back({host, dev(c.src_gpu), c.src_gpu});
      break;
    case Path::D2D:
      legs.push_back({dev(c.src_gpu), dev(c.src_gpu), c.src_gpu});
      if (c.direction == Direction::Bi) legs.push_back({dev(c.src_gpu), dev(c.src_gpu), c.src_gpu});
      break;
    case Path::Peer:
      legs.push_back({dev(c.src_gpu), dev(c.dst_gpu), driving_gpu(c.src_gpu, c.dst_gpu, c.side)});
      if (c.direction == Direction::Bi)
        legs.push_back({dev(c.dst_gpu), dev(c.src_gpu), driving_gpu(c.dst_gpu, c.src_gpu, c.side)});
      break;
  }
  return legs;
}

// Bytes one operation of a leg counts: a local device copy reads and writes the same HBM, so it
// counts both (2 x size, compared with the HBM peak); every other copy counts its payload once.
inline double leg_bytes(const Leg& leg, std::uint64_t size) {
  const bool local = resident_on_gpu(leg.src) && resident_on_gpu(leg.dst) && leg.src.gpu == leg.dst.gpu;
  return static_cast<double>(size) * (local ? 2.0 : 1.0);
}

inline double bytes_per_op(const std::vector<Leg>& legs, std::uint64_t size) {
  double sum = 0;
  for (const Leg& l : legs) sum += leg_bytes(l, size);
  return sum;
}

// Where a buffer's bytes are while copies run, as the movement model names it: the core
// Endpoint, made by its builders.
inline Endpoint place_of(const BufferSpec& b) {
  if (resident_on_gpu(b)) return gpu_memory(b.gpu, b.allocator, b.first_touch);
  return host_memory(std::nullopt, b.allocator, b.first_touch);
}

inline MoveDirection move_direction(Direction d) { return d == Direction::Bi ? MoveDirection::Bi : MoveDirection::Uni; }

// The choices a STREAM variant records besides its places: who drives it, managed advice, the
// kernel's shape.
inline void keep_copy_choices(Movement& m, const Params& p) {
  keep_choices(m, p, {"engine_side", "managed_hint", "vector_bytes", "unroll", "blocks_per_sm", "threads_per_block"});
}

// Every ordered pair (uni), or every unordered pair once with both directions at once (bi).
inline std::vector<std::pair<int, int>> matrix_pairs(int gpus, Direction d) {
  std::vector<std::pair<int, int>> out;
  for (int s = 0; s < gpus; ++s)
    for (int t = 0; t < gpus; ++t)
      if (s != t && (d == Direction::Uni || s < t)) out.emplace_back(s, t);
  return out;
}

// One root sending to every other GPU at once, or every other GPU sending to the root.
inline std::vector<Leg> fanout_legs(Fan fan, int root, int gpus, Side side) {
  std::vector<Leg> out;
  for (int g = 0; g < gpus; ++g) {
    if (g == root) continue;
    const int src = fan == Fan::OneToAll ? root : g;
    const int dst = fan == Fan::OneToAll ? g : root;
    out.push_back(
        {{Allocator::Device, src, "gpu", ""}, {Allocator::Device, dst, "gpu", ""}, driving_gpu(src, dst, side)});
  }
  return out;
}

inline std::optional<std::string> needs_two_gpus(int gpus) {
  if (gpus >= 2) return std::nullopt;
  return "needs 2 GPUs, found " + std::to_string(gpus);
}

}  // namespace commatlas::cuda
