#include "core/affinity.h"

#include <sched.h>

#include <cstdlib>
#include <set>
#include <sstream>

namespace commatlas {
namespace {

struct Pinning {
  bool pinned = false;
  cpu_set_t block;  // the set the launcher gave the rank
  cpu_set_t one;    // the CPU the measuring thread runs on
};

Pinning& pinning() {
  static Pinning p;
  return p;
}

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; false where the text is not such a list.
bool parse_cpu_list(const std::string& text, std::set<int>& out) {
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    char* end = nullptr;
    const long first = std::strtol(item.c_str(), &end, 10);
    long last = first;
    if (end == item.c_str()) return false;
    if (*end == '-') {
      const char* from = end + 1;
      last = std::strtol(from, &end, 10);
      if (end == from) return false;
    }
    if (*end != '\0' || first < 0 || last < first || last >= CPU_SETSIZE) return false;
    for (long c = first; c <= last; ++c) out.insert(static_cast<int>(c));
  }
  return !out.empty();
}

}  // namespace

bool each_rank_has_its_own_cpus(const std::vector<std::string>& rank_cpus, const std::vector<std::string>& rank_nodes) {
  if (rank_cpus.size() != rank_nodes.size() || rank_cpus.size() < 2) return false;
  std::vector<std::set<int>> sets(rank_cpus.size());
  for (std::size_t r = 0; r < rank_cpus.size(); ++r)
    if (!parse_cpu_list(rank_cpus[r], sets[r])) return false;
  for (std::size_t a = 0; a < sets.size(); ++a)
    for (std::size_t b = a + 1; b < sets.size(); ++b) {
      if (rank_nodes[a] != rank_nodes[b]) continue;
      for (int c : sets[a])
        if (sets[b].count(c)) return false;
    }
  return true;
}

void pin_measuring_thread() {
  Pinning& p = pinning();
  CPU_ZERO(&p.block);
  if (sched_getaffinity(0, sizeof p.block, &p.block) != 0 || CPU_COUNT(&p.block) < 2) return;
  CPU_ZERO(&p.one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &p.block)) {
      CPU_SET(c, &p.one);
      break;
    }
  p.pinned = sched_setaffinity(0, sizeof p.one, &p.one) == 0;
}

HelperThreadScope::HelperThreadScope() {
  Pinning& p = pinning();
  widened_ = p.pinned && sched_setaffinity(0, sizeof p.block, &p.block) == 0;
}

HelperThreadScope::~HelperThreadScope() {
  if (widened_) sched_setaffinity(0, sizeof pinning().one, &pinning().one);
}

}  // namespace commatlas
