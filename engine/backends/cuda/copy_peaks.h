// The theoretical peak each GPU-suite path is compared with, from the topology (topology.h).
#pragma once

#include <optional>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "core/benchmark.h"

namespace commatlas::gpu {

// h2d/d2h: PCIe per direction; local d2d: HBM (bytes read + written); peer: the GPU link per
// direction. Bidirectional: both directions summed.
std::optional<Peak> copy_peak(const CopySpec& spec);
// Copies out of (or into) one root: bounded by the root's link, which every peer shares when the
// GPUs hang off an NVSwitch, so the largest of the root's pair peaks.
std::optional<Peak> fanout_peak(const std::vector<Leg>& legs, Fan fan);

// Where a STREAM-style array lives, seen from the GPU running the kernel.
enum class Link { DeviceMemory, Peer, HostLink };
// `directions`: 1 when data crosses the link one way (read or write), 2 for copy over a link
// (reads come in while writes go out).
std::optional<Peak> link_peak(Link link, int gpu, int other_gpu, int directions);

}  // namespace commatlas::gpu
