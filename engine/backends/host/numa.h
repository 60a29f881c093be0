// NUMA placement for host buffers and threads.
//
// libnuma is loaded at run time (dlopen), so one engine binary runs everywhere: where libnuma or
// the kernel's NUMA support is missing, buffers stay unplaced and records say
// numa_placement "none" instead of claiming a node they may not be on.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace commatlas::host {

enum class NumaPlacement { None, Libnuma };
std::string to_string(NumaPlacement p);  // "none", "libnuma": the value records carry

// The libnuma calls we use, resolved once per process.
class Libnuma {
 public:
  static const Libnuma& get();
  // libnuma loaded and numa_available() >= 0 (the kernel supports the NUMA syscalls).
  bool usable() const { return alloc_onnode_ != nullptr; }
  NumaPlacement placement() const { return usable() ? NumaPlacement::Libnuma : NumaPlacement::None; }
  // Page-aligned memory whose pages are bound to `node`; nullptr when the allocation fails.
  void* alloc_on_node(std::size_t bytes, int node) const;
  void free(void* p, std::size_t bytes) const;

 private:
  Libnuma();
  void* (*alloc_onnode_)(std::size_t, int) = nullptr;
  void (*free_)(void*, std::size_t) = nullptr;
};

// CPUs of a NUMA node (from sysfs) that this process may run on; empty if unknown.
std::vector<int> cpus_of_node(int node);

// CPUs of the NUMA node the calling thread is running on now (cpus_of_node of it): threads bound
// there first-touch pages where the calling thread would. Empty if unknown.
std::vector<int> cpus_of_current_node();

// Binds the calling thread to `cpus` for the lifetime of the object, then restores the previous
// mask. An empty list leaves the thread where it was, so unplaced runs need no special case.
class ScopedCpuBinding {
 public:
  explicit ScopedCpuBinding(const std::vector<int>& cpus);
  ~ScopedCpuBinding();
  ScopedCpuBinding(const ScopedCpuBinding&) = delete;
  ScopedCpuBinding& operator=(const ScopedCpuBinding&) = delete;

 private:
  std::vector<unsigned char> saved_;  // the previous cpu_set_t, opaque here
};

// Binds the calling thread to `cpus` for good (pool workers, first-touch threads).
void bind_this_thread(const std::vector<int>& cpus);

}  // namespace commatlas::host
