#include "topology/sysfs.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace commatlas {
namespace {

bool read_line(const std::string& path, std::string& line) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, line));
}

int read_int(const std::string& path, int fallback) {
  std::string line;
  if (!read_line(path, line)) return fallback;
  std::istringstream in(line);
  int v = 0;
  return in >> v ? v : fallback;
}

}  // namespace

int pcie_generation_of_speed(const std::string& speed) {
  std::istringstream in(speed);
  double gts = 0;
  if (!(in >> gts)) return 0;
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};
  for (int gen = 1; gen <= 6; ++gen)
    if (std::fabs(gts - kRates[gen - 1]) < 0.01) return gen;
  return 0;
}

void read_pci_sysfs(GpuInfo& info, const std::string& devices_dir) {
  if (info.pci_bus_id.empty()) return;
  const std::string dir = devices_dir + "/" + info.pci_bus_id + "/";
  info.numa_node = read_int(dir + "numa_node", info.numa_node);  // the kernel writes -1 when unknown
  std::string cpus;
  if (read_line(dir + "local_cpulist", cpus)) info.cpu_affinity = cpus;

  if (!info.pcie.source.empty()) return;  // NVML answered already
  std::string speed;
  PcieLink link;
  if (read_line(dir + "max_link_speed", speed)) link.gen_max = pcie_generation_of_speed(speed);
  if (read_line(dir + "current_link_speed", speed)) link.gen_current = pcie_generation_of_speed(speed);
  link.width_max = read_int(dir + "max_link_width", 0);
  link.width_current = read_int(dir + "current_link_width", 0);
  if (link.gen_max > 0 && link.width_max > 0) {
    link.source = "sysfs";
    info.pcie = link;
  }
}

}  // namespace commatlas
