// Round-trip latency between every pair of this machine's CPUs, through one shared cache line:
// what a shared-memory message between two ranks pays at the least. A VM shows its vCPUs as one
// flat socket; the host may place them on different cores, caches or sockets, and this shows it.
// Usage: core_to_core [ROUND_TRIPS]   prints "a b ns" per pair (the best of 3 tries' medians).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
alignas(64) std::atomic<long> flag{0};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Mean round trip (ns) over `trips` ping-pongs between a thread on `a` and one on `b`.
double round_trip_ns(int a, int b, long trips) {
  flag.store(0);
  std::thread partner([&] {
    pin(b);
    for (long k = 0; k < trips; ++k) {
      while (flag.load(std::memory_order_acquire) != 2 * k + 1) {}
      flag.store(2 * k + 2, std::memory_order_release);
    }
  });
  pin(a);
  // Let the partner reach its loop before timing.
  flag.store(1, std::memory_order_release);
  while (flag.load(std::memory_order_acquire) != 2) {}
  const auto t0 = std::chrono::steady_clock::now();
  for (long k = 1; k < trips; ++k) {
    flag.store(2 * k + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * k + 2) {}
  }
  const auto t1 = std::chrono::steady_clock::now();
  partner.join();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(trips - 1);
}
}  // namespace

int main(int argc, char** argv) {
  const long trips = argc > 1 ? std::atol(argv[1]) : 2000;
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof(allowed), &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  for (size_t i = 0; i < cpus.size(); ++i)
    for (size_t j = i + 1; j < cpus.size(); ++j) {
      double best = 1e30;
      for (int t = 0; t < 3; ++t) best = std::min(best, round_trip_ns(cpus[i], cpus[j], trips));
      std::printf("%d %d %.1f\n", cpus[i], cpus[j], best);
    }
  return 0;
}
