// TEMPORARY diagnostic (not committed): wall-clock marks of the engine's start and end.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
namespace commatlas {
inline void startup_mark(const char* what) {
  static const bool on = std::getenv("COMMATLAS_STARTUP_TRACE") != nullptr;
  if (!on) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  std::fprintf(stderr, "[mark] %d %ld.%06ld %s\n", static_cast<int>(getpid()), static_cast<long>(ts.tv_sec), ts.tv_nsec / 1000, what);
}
}
