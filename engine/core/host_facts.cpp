// Host facts read from sysfs and procfs: no library needed to know the shape of the machine.
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/context.h"

namespace commatlas {
namespace {

std::uint64_t meminfo_kib(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // "MemTotal:  1234 kB" in /proc/meminfo, "Node 0 MemTotal:  1234 kB" in the node files.
    const auto pos = line.find(field + ":");
    if (pos == std::string::npos) continue;
    std::istringstream rest(line.substr(pos + field.size() + 1));
    std::uint64_t kib = 0;
    rest >> kib;
    return kib;
  }
  return 0;
}

// "32768K", "1M", "512" (bytes) as sysfs writes cache sizes; 0 when unreadable.
std::uint64_t parse_cache_size(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  if (unit == 'K') return value << 10;
  if (unit == 'M') return value << 20;
  if (unit == 'G') return value << 30;
  return value;
}

}  // namespace

std::uint64_t last_level_cache_bytes(const std::string& cache_dir) {
  // index0, index1, ...: the highest level wins; one CPU's view (cpu0) is the machine's shape.
  int best_level = 0;
  std::uint64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = cache_dir + "/index" + std::to_string(i);
    std::ifstream level_file(dir + "/level"), size_file(dir + "/size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size)) continue;
    const std::uint64_t bytes = parse_cache_size(size);
    if (level > best_level || (level == best_level && bytes > best)) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

HostFacts discover_host() {
  HostFacts h;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  h.logical_cpus = cpus > 0 ? static_cast<int>(cpus) : 1;
  h.memory_total = meminfo_kib("/proc/meminfo", "MemTotal") * 1024;
  h.memory_available = meminfo_kib("/proc/meminfo", "MemAvailable") * 1024;
  if (h.memory_available == 0) h.memory_available = h.memory_total;

  if (DIR* dir = opendir("/sys/devices/system/node")) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.rfind("node", 0) != 0 || name.size() <= 4 ||
          !std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      const int id = std::stoi(name.substr(4));
      // Memory-less nodes (CPU-only or GPU-only) cannot hold a buffer.
      if (meminfo_kib("/sys/devices/system/node/" + name + "/meminfo", "MemTotal") > 0) h.numa_nodes.push_back(id);
    }
    closedir(dir);
  }
  std::sort(h.numa_nodes.begin(), h.numa_nodes.end());
  if (h.numa_nodes.empty()) h.numa_nodes.push_back(0);

  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) h.cpu_model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  h.last_level_cache_bytes = last_level_cache_bytes("/sys/devices/system/cpu/cpu0/cache");
  if (void* numa = dlopen("libnuma.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    h.numa_placement = true;
    dlclose(numa);
  }
  return h;
}

}  // namespace commatlas
