// Theoretical peaks: link arithmetic only, no discovery, so every number is checkable by hand.
#include <cstdio>

#include "topology/answers.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

// Transfer rate per lane in GT/s, by PCIe generation (index 0 unused).
constexpr double kPcieGigatransfers[] = {0, 2.5, 5, 8, 16, 32, 64};
constexpr int kPcieGenerations = sizeof(kPcieGigatransfers) / sizeof(kPcieGigatransfers[0]) - 1;

// Gen1/2 spend 10 line bits per 8 data bits; Gen3 and later 130 per 128.
double pcie_encoding(int generation) { return generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0; }
const char* pcie_encoding_name(int generation) { return generation <= 2 ? "8b/10b" : "128b/130b"; }

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

const GpuInfo* find_gpu(const Topology& topo, int gpu) {
  for (const GpuInfo& g : topo.gpus)
    if (g.index == gpu) return &g;
  return nullptr;
}

}  // namespace

double pcie_gbps_per_direction(int generation, int width) {
  if (generation < 1 || generation > kPcieGenerations || width <= 0) return 0;
  return kPcieGigatransfers[generation] * pcie_encoding(generation) * width / 8.0;
}

double hbm_gbps(int memory_clock_mhz, int bus_width_bits) {
  if (memory_clock_mhz <= 0 || bus_width_bits <= 0) return 0;
  // Double data rate: two transfers per clock, each bus_width_bits wide.
  return 2.0 * memory_clock_mhz * 1e6 * bus_width_bits / 8.0 / 1e9;
}

int nvlink_generation(int compute_major, int compute_minor, int nvml_version) {
  if (compute_major == 6 && compute_minor == 0) return 1;  // P100
  if (compute_major == 7 && compute_minor == 0) return 2;  // V100
  if (compute_major == 8 && compute_minor == 0) return 3;  // A100
  if (compute_major == 9) return 4;                        // H100, H200, GH200
  if (compute_major == 10) return 5;                       // B200, GB200
  // nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0.
  constexpr int kGenerationOfNvmlVersion[] = {0, 1, 2, 2, 3, 3, 4, 5};
  if (nvml_version >= 1 && nvml_version <= 7) return kGenerationOfNvmlVersion[nvml_version];
  return 0;
}

double nvlink_table_gbps(int generation) {
  switch (generation) {
    case 1: return 20;
    case 2: return 25;
    case 3: return 25;
    case 4: return 26.5625;  // 2 lanes x 106.25 Gb/s
    case 5: return 50;
    default: return 0;
  }
}

std::optional<Peak> peak_host_link(const Topology& topo, int gpu) {
  const GpuInfo* g = find_gpu(topo, gpu);
  if (!g || g->pcie.peak_gbps <= 0) return std::nullopt;
  const int gen = g->pcie.gen_max;
  return Peak{g->pcie.peak_gbps,
              "PCIe Gen" + std::to_string(gen) + " x" + std::to_string(g->pcie.width_max) + ": " +
                  format("%g GT/s per lane, ", kPcieGigatransfers[gen]) + pcie_encoding_name(gen) + " (" +
                  g->pcie.source + ")"};
}

std::optional<Peak> peak_device_memory(const Topology& topo, int gpu) {
  const GpuInfo* g = find_gpu(topo, gpu);
  if (!g || g->hbm_peak_gbps <= 0) return std::nullopt;
  return Peak{g->hbm_peak_gbps,
              format("HBM: 2 x %g MHz x %g bit / 8 (CUDA runtime); read and write share it, so a local "
                     "copy counts its bytes read + written against it",
                     g->memory_clock_mhz, g->memory_bus_width_bits)};
}

std::optional<Peak> peak_peer(const Topology& topo, int src, int dst) {
  const GpuPair* p = topo.pair(src, dst);
  if (!p || p->peak_gbps <= 0) return std::nullopt;
  return Peak{p->peak_gbps, p->peak_source};
}

}  // namespace commatlas
