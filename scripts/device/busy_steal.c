// How the host treats N busy vCPUs, without commatlas: N threads, thread i pinned to CPU i, each
// reading its clock in a tight loop for SECONDS; a gap between two reads is time the thread did not
// run (its vCPU was taken by the hypervisor, or the guest ran something else there). Prints, per N,
// the node's steal share over the window (/proc/stat), the CPUs that lost 2 ticks or more, and over
// the threads: gaps of 0.5 ms or more, the longest gap, and the share of the window lost in them.
// Build: cc -O2 -pthread busy_steal.c -o busy_steal; run: ./busy_steal SECONDS N1 N2 ...
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CPUS 1024

typedef struct {
  int cpu;
  double seconds;
  long gaps;      // gaps of 0.5 ms or more
  double longest; // seconds
  double lost;    // seconds in those gaps
} Busy;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void* spin(void* arg) {
  Busy* b = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(b->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  const double start = now();
  double last = start;
  while (last - start < b->seconds) {
    const double t = now();
    const double gap = t - last;
    if (gap >= 0.5e-3) {
      b->gaps++;
      b->lost += gap;
      if (gap > b->longest) b->longest = gap;
    }
    last = t;
  }
  return NULL;
}

// Total and per-CPU steal ticks (the 8th number of each cpu line), and the total of every field.
static int read_stat(unsigned long long* total, unsigned long long* steal_all, unsigned long long* steal_cpu) {
  FILE* f = fopen("/proc/stat", "r");
  if (!f) return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "cpu", 3) != 0) break;
    unsigned long long v[10] = {0};
    int cpu = -1;
    if (line[3] == ' ') {
      sscanf(line + 3, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
      *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
      *steal_all = v[7];
    } else if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                      &v[5], &v[6], &v[7]) == 9 && cpu < MAX_CPUS) {
      steal_cpu[cpu] = v[7];
      if (cpu + 1 > n) n = cpu + 1;
    }
  }
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECONDS N1 [N2 ...]\n", argv[0]);
    return 2;
  }
  const double seconds = atof(argv[1]);
  printf("threads  steal_share  cpus_stolen  gaps>=0.5ms  longest_ms  lost_share\n");
  for (int a = 2; a < argc; ++a) {
    const int n = atoi(argv[a]);
    static unsigned long long s0[MAX_CPUS], s1[MAX_CPUS];
    unsigned long long t0 = 0, t1 = 0, st0 = 0, st1 = 0;
    const int cpus = read_stat(&t0, &st0, s0);
    pthread_t th[MAX_CPUS];
    Busy b[MAX_CPUS];
    for (int i = 0; i < n && i < MAX_CPUS; ++i) {
      b[i] = (Busy){.cpu = i % (cpus > 0 ? cpus : 1), .seconds = seconds};
      pthread_create(&th[i], NULL, spin, &b[i]);
    }
    long gaps = 0;
    double longest = 0, lost = 0;
    for (int i = 0; i < n && i < MAX_CPUS; ++i) {
      pthread_join(th[i], NULL);
      gaps += b[i].gaps;
      lost += b[i].lost;
      if (b[i].longest > longest) longest = b[i].longest;
    }
    read_stat(&t1, &st1, s1);
    int stolen = 0;
    for (int c = 0; c < cpus; ++c) stolen += s1[c] - s0[c] >= 2;
    printf("%7d  %11.3f  %11d  %11ld  %10.2f  %10.4f\n", n, t1 > t0 ? (double)(st1 - st0) / (t1 - t0) : 0.0, stolen,
           gaps, 1e3 * longest, lost / (n * seconds));
    fflush(stdout);
  }
  return 0;
}
