// Who can reach which memory: the checks every GPU-suite benchmark makes before it allocates,
// each one turning "cannot here" into a Skip with the reason, never a crash.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/memory.h"
#include "core/benchmark.h"

namespace commatlas::cuda {

// The size sweep of the GPU suite's bandwidth benchmarks: 4 KiB to 1 GiB, x4 per step; --quick
// takes 64 KiB, 16 MiB and 256 MiB (cache-resident, mid-size, link-bound).
std::vector<std::uint64_t> gpu_bandwidth_sizes();
std::vector<std::uint64_t> gpu_bandwidth_quick_sizes();

// The info of a GPU-suite benchmark: one process (rank range 1..1), suite "gpu".
// `full_tier`: the variants only --full measures (BenchmarkInfo::full_tier).
BenchmarkInfo gpu_suite_info(std::string key, Category category, std::string description, Metric metric,
                             std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> quick_sizes,
                             std::vector<TierRule> full_tier = {});

// "no GPU: <why>" when this process sees none, else nullopt.
std::optional<std::string> no_gpu_reason();
// no_gpu_reason(), or "needs 2 GPUs, found N".
std::optional<std::string> fewer_than_two_gpus();

// Lets kernels and copies on `from` address `to`'s memory. Throws Skip naming the pair when the
// driver says the pair has no peer access (never falls back to a staged copy silently).
void enable_peer_access(int from, int to);

// Throws Skip unless a kernel on `gpu` may dereference memory of `kind` (pageable memory needs
// cudaDevAttrPageableMemoryAccess).
void require_kernel_access(MemoryKind kind, int gpu);

// Where managed pages go (CUDA 13 takes a cudaMemLocation, not a device number).
cudaMemLocation gpu_location(int gpu);
cudaMemLocation host_location();

// Keeps managed pages in host memory (preferred location) and maps them for `gpu` (accessed by).
void advise_host_preferred(const void* ptr, std::size_t bytes, int gpu);

}  // namespace commatlas::cuda
