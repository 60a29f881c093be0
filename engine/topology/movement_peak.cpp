// The peak of a movement: the one place a record's peak and cache residency are decided.
//
// Benchmarks declare what they move (core/movement.h); this file turns that into the link or
// memory the bytes cross (HBM within a GPU, PCIe between host and GPU, the NVLink/PCIe pair
// between GPUs), doubles it for both directions at once, compares a collective's busbw with the
// link, and says why where there is no peak to give.
#include <algorithm>
#include <cstdio>

#include "core/sizes.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

std::string size_text(double bytes) { return format_size(static_cast<std::uint64_t>(bytes)); }

const GpuInfo* find_gpu(const Topology& topo, std::optional<int> gpu) {
  if (!gpu) return nullptr;
  for (const GpuInfo& g : topo.gpus)
    if (g.index == *gpu) return &g;
  return nullptr;
}

// Collectives and patterns: every member of a communicator takes part.
bool is_collective(Operation op) { return participants_of(kind_of(op)) == "all"; }

bool gpu_side(const Endpoint& e) { return e.memory == Memory::Gpu; }

PeakAnswer known(const std::optional<Peak>& p, const std::string& missing) {
  PeakAnswer a;
  a.applies = true;
  if (p && p->gbps > 0) {
    a.gbps = p->gbps;
    a.source = p->source;
  } else {
    a.unknown = missing;
  }
  return a;
}

PeakAnswer unknown(const std::string& why) {
  PeakAnswer a;
  a.applies = true;
  a.unknown = why;
  return a;
}

std::optional<Peak> doubled(std::optional<Peak> p, const std::string& why) {
  if (!p) return p;
  p->gbps *= 2;
  p->source += " x2 (" + why + ")";
  return p;
}

std::optional<Peak> both_ways(const Topology& topo, int a, int b) {
  auto there = peak_peer(topo, a, b), back = peak_peer(topo, b, a);
  if (!there || !back) return std::nullopt;
  there->gbps += back->gbps;
  there->source = there->source == back->source ? there->source + " x2 (both directions)"
                                                : there->source + " + " + back->source;
  return there;
}

std::string gpu_name(int gpu) { return "GPU " + std::to_string(gpu); }

// The GPU whose SMs move the bytes, where the movement declares it apart from its places.
std::optional<int> kernel_gpu(const Movement& m) {
  return m.by && m.by->memory == Memory::Gpu ? m.by->gpu : std::nullopt;
}

// The cache the working set could live in, when both ends are one memory: a GPU's L2 (its own
// HBM, its own SMs) or the CPU's last-level cache (host memory touched by the CPU).
struct Cache {
  std::uint64_t bytes = 0;
  std::string name;
};

std::optional<Cache> shared_cache(const Movement& m, const Topology& topo, std::uint64_t cpu_cache_bytes) {
  const Endpoint& a = *m.from;
  const Endpoint& b = *m.to;
  if (gpu_side(a) && gpu_side(b) && a.gpu && b.gpu && *a.gpu == *b.gpu && a.rank == b.rank) {
    // A copy kernel on another GPU reads and writes this one's memory over the link: no cache helps.
    if (kernel_gpu(m) && *kernel_gpu(m) != *a.gpu) return std::nullopt;
    const GpuInfo* g = find_gpu(topo, a.gpu);
    if (!g || g->l2_cache_bytes == 0) return std::nullopt;
    return Cache{g->l2_cache_bytes, gpu_name(*a.gpu) + "'s " + size_text(static_cast<double>(g->l2_cache_bytes)) + " L2"};
  }
  const bool cpu = m.mechanism == Mechanism::CpuMemcpy || m.mechanism == Mechanism::CpuLoadStore;
  if (cpu && a.memory == Memory::Host && b.memory == Memory::Host && cpu_cache_bytes > 0)
    return Cache{cpu_cache_bytes, "the CPU's " + size_text(static_cast<double>(cpu_cache_bytes)) + " last-level cache"};
  return std::nullopt;
}

// A collective compares its busbw with what one GPU can inject: the link of the first GPU pair
// (where ranks 0 and 1 sit), or the host link when every byte is staged through host memory.
PeakAnswer collective_peak(const Movement& m, const Topology& topo) {
  if (m.mechanism == Mechanism::MpiStaged)
    return known(peak_host_link(topo, 0), "no PCIe peak known for GPU 0");
  if (!gpu_side(*m.from)) return unknown("no peak: the buffers are host memory, whose peak is not known");
  if (topo.gpus.size() < 2) return unknown("no GPU pair in the topology to compare the busbw with");
  auto p = peak_peer(topo, 0, 1);
  if (p) p->source += " (busbw compared with one GPU's link)";
  return known(p, "no peak known for the link of GPUs 0 and 1");
}

// Bytes from one rank's (or one process's) buffer to another's.
PeakAnswer message_peak(const Movement& m, const Topology& topo) {
  const bool bi = m.direction == MoveDirection::Bi;
  if (m.mechanism == Mechanism::MpiStaged) {
    const int gpu = m.from->gpu.value_or(0);
    auto p = peak_host_link(topo, gpu);
    if (p) p->source += " (every byte staged through host memory)";
    return known(bi ? doubled(p, "both directions") : p, "no PCIe peak known for " + gpu_name(gpu));
  }
  if (!gpu_side(*m.from) || !gpu_side(*m.to))
    return unknown("no peak: host buffers move through host memory, whose peak is not known");
  if (!m.from->gpu || !m.to->gpu) return unknown("the GPUs of the two ranks are not known");
  const int a = *m.from->gpu, b = *m.to->gpu;
  if (a == b) return unknown("both ranks share " + gpu_name(a) + ": no link between them");
  return known(bi ? both_ways(topo, a, b) : peak_peer(topo, a, b),
               "no peak known for the link of GPUs " + std::to_string(a) + " and " + std::to_string(b));
}

// Copies, reads and writes by a GPU or its copy engines, within a node.
PeakAnswer gpu_path_peak(const Movement& m, const Topology& topo) {
  const Endpoint& from = *m.from;
  const Endpoint& to = *m.to;
  const bool bi = m.direction == MoveDirection::Bi;
  if (m.direction == MoveDirection::OneToAll || m.direction == MoveDirection::AllToOne) {
    const bool out = m.direction == MoveDirection::OneToAll;
    const std::optional<int> root = out ? from.gpu : to.gpu;
    if (!root) return unknown("the root GPU is not known");
    // Bounded by the root's link, which every peer shares when the GPUs hang off an NVSwitch.
    std::optional<Peak> best;
    for (const GpuInfo& g : topo.gpus) {
      if (g.index == *root) continue;
      auto p = out ? peak_peer(topo, *root, g.index) : peak_peer(topo, g.index, *root);
      if (p && (!best || p->gbps > best->gbps)) best = p;
    }
    if (best)
      best->source += out ? " (the root's outgoing link, shared by all receivers)"
                          : " (the root's incoming link, shared by all senders)";
    return known(best, "no peak known for " + gpu_name(*root) + "'s links");
  }
  // A copy kernel whose arrays both sit away from the GPU running it: reads come in while writes
  // go out over the same link.
  const std::optional<int> kernel = kernel_gpu(m);
  if (m.operation == Operation::Copy && kernel && from.memory == to.memory && from.gpu == to.gpu &&
      (from.memory == Memory::Host || (from.gpu && *from.gpu != *kernel))) {
    if (from.memory == Memory::Host)
      return known(doubled(peak_host_link(topo, *kernel), "reads in, writes out"),
                   "no PCIe peak known for " + gpu_name(*kernel));
    return known(both_ways(topo, *kernel, *from.gpu), "no peak known for the GPU pair");
  }
  if (gpu_side(from) && gpu_side(to)) {
    if (!from.gpu || !to.gpu) return unknown("the GPUs of the endpoints are not known");
    if (*from.gpu == *to.gpu)
      return known(peak_device_memory(topo, *from.gpu), "no HBM peak known for " + gpu_name(*from.gpu));
    return known(bi ? both_ways(topo, *from.gpu, *to.gpu) : peak_peer(topo, *from.gpu, *to.gpu),
                 "no peak known for the link of GPUs " + std::to_string(*from.gpu) + " and " + std::to_string(*to.gpu));
  }
  if (gpu_side(from) != gpu_side(to)) {
    const std::optional<int> gpu = gpu_side(from) ? from.gpu : to.gpu;
    if (!gpu) return unknown("the GPU of the path is not known");
    auto p = peak_host_link(topo, *gpu);
    return known(bi ? doubled(p, "both directions") : p, "no PCIe peak known for " + gpu_name(*gpu));
  }
  return unknown("no peak: both endpoints are host memory");
}

bool involves_gpu(const Movement& m) {
  for (const auto* e : {&m.from, &m.to, &m.by})
    if (*e && ((*e)->memory == Memory::Gpu || (*e)->gpu)) return true;
  return false;
}

// Host memory to host memory by the CPU: the DRAM channels carry the bytes (twice for a copy).
PeakAnswer host_memory_answer(const Movement& m, const HostMemoryPeak& host_memory) {
  if (!host_memory.peak)
    return unknown("no host memory peak: " + (host_memory.unknown.empty() ? std::string("not looked for") : host_memory.unknown));
  for (const Endpoint* e : {&*m.from, &*m.to})
    if (e->numa && host_memory.arrays > 1)
      return unknown("the host memory peak is the whole machine's (" + std::to_string(host_memory.arrays) +
                     " memory arrays); SMBIOS does not say which modules NUMA node " + std::to_string(*e->numa) + " has");
  std::optional<Peak> p = host_memory.peak;
  if (m.operation == Operation::Copy) {
    p->gbps /= 2;
    p->source += " / 2: a copy reads and writes every byte through the same channels";
  }
  return known(p, "no host memory peak");
}

}  // namespace

PeakAnswer movement_peak(const Movement& m, std::uint64_t bytes, std::uint64_t cpu_cache_bytes) {
  // Host-only runs never start GPU discovery (the CUDA runtime, NVML) just to learn there is none.
  static const Topology no_gpus;
  const bool host_only = !involves_gpu(m);
  return peak_of(m, bytes, host_only ? no_gpus : gpu_topology(), cpu_cache_bytes,
                 host_only ? host_memory_peak() : HostMemoryPeak{});
}

PeakAnswer peak_of(const Movement& m, std::uint64_t bytes, const Topology& topo, std::uint64_t cpu_cache_bytes,
                   const HostMemoryPeak& host_memory) {
  if (!m.from || !m.to || m.operation == Operation::Nothing) return PeakAnswer{};
  PeakAnswer a;
  std::string resident_why;
  if (m.cache_working_set_per_byte > 0)
    if (const auto cache = shared_cache(m, topo, cpu_cache_bytes)) {
      const double working_set = m.cache_working_set_per_byte * static_cast<double>(bytes);
      if (working_set <= static_cast<double>(cache->bytes)) {
        a.cache_resident = true;
        resident_why = "cache-resident: the " + size_text(working_set) + " working set fits " + cache->name;
      }
    }
  if (m.operation == Operation::LoadLatency) {
    a.applies = false;  // a latency claims no bandwidth: nothing to compare with a peak
    return a;
  }
  const bool resident = a.cache_resident;
  if (resident)
    a = unknown(resident_why);
  else if (!m.same_node)
    a = unknown("between nodes: the network's peak is not known yet");
  else if (m.mechanism == Mechanism::CpuMemcpy || m.mechanism == Mechanism::CpuLoadStore)
    a = host_memory_answer(m, host_memory);
  else if (m.mechanism == Mechanism::MpiHost)
    a = unknown("no peak: MPI on host buffers moves through host memory (or the network), whose peak is not known");
  else if (m.mechanism == Mechanism::Harness)
    a = PeakAnswer{};
  else if (is_collective(m.operation))
    a = collective_peak(m, topo);
  else if (m.operation == Operation::SendRecv || m.operation == Operation::PingPong)
    a = message_peak(m, topo);
  else
    a = gpu_path_peak(m, topo);
  a.cache_resident = resident;
  return a;
}

}  // namespace commatlas
