// First touch of a large host buffer by several threads of one NUMA node.
//
// A fresh page is placed where the thread that first writes it runs, and the page fault is most of
// what filling fresh memory costs: one thread wrote 256 MiB of fresh pages in 0.14 s on the 2-core
// VM, two in 0.07-0.08 s. On 2x H100 a default run prepares a dozen such buffers (host.memcpy,
// pointer chains, pageable copy sources), each 0.2-0.5 s of its point's prepare; on 8 threads the
// run's preparation took 1.2-2.4 s less (results/nvidia-h100-x2/figures-that-hold-8). Threads bound
// to the node the single thread would have used put every page where it would have put it: the
// placement is the same, only sooner.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace commatlas::host {

// Below this, one thread: a thread start costs more than the faults it would share.
inline constexpr std::size_t kParallelTouchFrom = std::size_t{16} << 20;
// Not tuned: enough to take most of the faults' time off a 256 MiB buffer on 2x H100; past some
// count the faults contend on the process's memory map.
inline constexpr int kMaxTouchThreads = 8;

// Runs `part(begin, end)` over [0, bytes) in page-aligned slices on up to kMaxTouchThreads
// threads bound to `cpus`, and waits for them. With fewer than two CPUs, or fewer bytes than
// kParallelTouchFrom, one thread bound to `cpus` does it all (the calling thread itself where
// `cpus` is empty: the placement is then the kernel's, as it was). The first exception a part
// throws is rethrown here.
void touch_in_parallel(std::size_t bytes, const std::vector<int>& cpus,
                       const std::function<void(std::size_t begin, std::size_t end)>& part);

// As the calling thread's own writes would: below kParallelTouchFrom on the calling thread itself,
// above it on threads bound to the CPUs of the NUMA node the calling thread runs on
// (cpus_of_current_node).
void touch_from_this_node(std::size_t bytes, const std::function<void(std::size_t begin, std::size_t end)>& part);

}  // namespace commatlas::host
