#include "backends/host/numa.h"

#include <dlfcn.h>
#include <sched.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace commatlas::host {

std::string to_string(NumaPlacement p) { return p == NumaPlacement::Libnuma ? "libnuma" : "none"; }

Libnuma::Libnuma() {
  // Never dlclose'd: buffers allocated through it may live until exit.
  void* lib = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  auto available = reinterpret_cast<int (*)()>(dlsym(lib, "numa_available"));
  auto alloc = reinterpret_cast<void* (*)(std::size_t, int)>(dlsym(lib, "numa_alloc_onnode"));
  auto release = reinterpret_cast<void (*)(void*, std::size_t)>(dlsym(lib, "numa_free"));
  // numa_available() must be called before any other libnuma function; -1 means the kernel
  // refuses the NUMA syscalls (some containers), where binding would silently do nothing.
  if (!available || !alloc || !release || available() < 0) return;
  alloc_onnode_ = alloc;
  free_ = release;
}

const Libnuma& Libnuma::get() {
  static const Libnuma instance;
  return instance;
}

void* Libnuma::alloc_on_node(std::size_t bytes, int node) const {
  return usable() ? alloc_onnode_(bytes, node) : nullptr;
}

void Libnuma::free(void* p, std::size_t bytes) const {
  if (p && free_) free_(p, bytes);
}

namespace {

// "0-3,8-11" -> {0,1,2,3,8,9,10,11}
std::vector<int> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string range;
  while (std::getline(in, range, ',')) {
    if (range.empty() || range == "\n") continue;
    const auto dash = range.find('-');
    try {
      const int lo = std::stoi(range.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    } catch (const std::exception&) {
      return {};  // unreadable: treat the node's CPUs as unknown rather than guess
    }
  }
  return cpus;
}

cpu_set_t to_cpu_set(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return set;
}

}  // namespace

std::vector<int> cpus_of_node(int node) {
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::string text;
  std::getline(in, text);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> out;
  for (int c : parse_cpulist(text))
    if (c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) out.push_back(c);
  return out;
}

std::vector<int> cpus_of_current_node() {
  unsigned cpu = 0, node = 0;
  if (getcpu(&cpu, &node) != 0) return {};
  return cpus_of_node(static_cast<int>(node));
}

void bind_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  const cpu_set_t set = to_cpu_set(cpus);
  COMMATLAS_CHECK_POSIX(sched_setaffinity(0, sizeof set, &set));
}

ScopedCpuBinding::ScopedCpuBinding(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t previous;
  COMMATLAS_CHECK_POSIX(sched_getaffinity(0, sizeof previous, &previous));
  bind_this_thread(cpus);
  saved_.resize(sizeof previous);
  std::memcpy(saved_.data(), &previous, sizeof previous);
}

ScopedCpuBinding::~ScopedCpuBinding() {
  if (saved_.empty()) return;
  cpu_set_t previous;
  std::memcpy(&previous, saved_.data(), sizeof previous);
  sched_setaffinity(0, sizeof previous, &previous);  // best effort: destructors must not throw
}

}  // namespace commatlas::host
