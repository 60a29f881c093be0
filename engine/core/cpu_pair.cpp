#include "core/cpu_pair.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "core/group.h"

namespace commatlas {
namespace {

using Clock = std::chrono::steady_clock;

// One page both sides map: the flag they hand back and forth on a cache line of its own, and the
// partner's CPU beside it (another line, so that writing it does not disturb the flag's).
struct PairLine {
  alignas(64) std::atomic<std::int64_t> flag{0};
  alignas(64) std::atomic<int> partner_cpu{-1};
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the flag must be lock-free to work across processes");

constexpr double kAnswerWithin_s = 1.0;

// The flag's value for "the other side gave up": the counts only ever grow from 0.
constexpr std::int64_t kGaveUp = -1;

// Spins until `line.flag` reads `want`; false when the other side gave up or the whole call has
// run past its deadline.
bool wait_for(const PairLine& line, std::int64_t want, Clock::time_point deadline) {
  for (std::uint32_t spins = 1;; ++spins) {
    const std::int64_t v = line.flag.load(std::memory_order_acquire);
    if (v == want) return true;
    if (v == kGaveUp) return false;
    if ((spins & 1023) == 0 && Clock::now() > deadline) return false;
  }
}

// Each side counts the flag's values in `seq`, which both keep equal between calls: a trip is the
// leader's odd value and the follower's even answer.
bool lead(PairLine& line, std::int64_t& seq, int trips, Clock::time_point deadline) {
  for (int k = 0; k < trips; ++k) {
    line.flag.store(++seq, std::memory_order_release);
    if (!wait_for(line, ++seq, deadline)) return false;
  }
  return true;
}

bool follow(PairLine& line, std::int64_t& seq, int trips, Clock::time_point deadline) {
  for (int k = 0; k < trips; ++k) {
    if (!wait_for(line, ++seq, deadline)) return false;
    line.flag.store(++seq, std::memory_order_release);
  }
  return true;
}

// The leader's side of one reading: a warm-up batch, then the batches it times.
std::optional<double> lead_reading(PairLine& line, std::int64_t& seq, Clock::time_point deadline) {
  if (!lead(line, seq, kPairTrips * kPairWarmupBatches, deadline)) return std::nullopt;
  double best_ns = 0;
  for (int b = 0; b < kPairBatches; ++b) {
    const auto t0 = Clock::now();
    if (!lead(line, seq, kPairTrips, deadline)) return std::nullopt;
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kPairTrips;
    best_ns = b == 0 ? ns : std::min(best_ns, ns);
  }
  return best_ns;
}

bool follow_reading(PairLine& line, std::int64_t& seq, Clock::time_point deadline) {
  line.partner_cpu.store(sched_getcpu(), std::memory_order_relaxed);
  return follow(line, seq, kPairTrips * (kPairWarmupBatches + kPairBatches), deadline);
}

bool pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// A single process: a helper thread on each CPU of the pair, the caller waiting for both. A
// reading that fails (a CPU it cannot pin to, a helper that never answers) ends the process's
// readings, so no later pass waits out the deadline again.
std::optional<CpuRoundTrip> within_this_process() {
  static bool failed = false;
  const auto pair = first_two_cpus();
  if (!pair || failed) return std::nullopt;
  PairLine line;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(kAnswerWithin_s));
  std::optional<double> ns;
  bool lead_pinned = false, follow_pinned = false, followed = false;
  // Each side's count lives on its own thread's stack: two counters side by side in the caller's
  // frame shared a cache line, which the pair then bounced on every trip beside the flag (700-790
  // ns against 420 from a pair without them).
  // A side that cannot pin, or stops waiting, says so on the flag, and the other stops too.
  std::thread follower([&] {
    std::int64_t seq = 0;
    follow_pinned = pin_this_thread(pair->b);
    followed = follow_pinned && follow_reading(line, seq, deadline);
    if (!followed) line.flag.store(kGaveUp, std::memory_order_release);
  });
  std::thread leader([&] {
    std::int64_t seq = 0;
    lead_pinned = pin_this_thread(pair->a);
    if (lead_pinned) ns = lead_reading(line, seq, deadline);
    if (!ns) line.flag.store(kGaveUp, std::memory_order_release);
  });
  leader.join();
  follower.join();
  if (!lead_pinned || !follow_pinned || !followed || !ns) {
    failed = true;
    return std::nullopt;
  }
  return CpuRoundTrip{pair->a, pair->b, *ns};
}

// An MPI job's channel, set up at the first call, kept for the job.
struct Channel {
  bool set_up = false;
  bool usable = false;   // the same on every rank
  int role = 0;          // 1 leads (rank 0), 2 follows (its partner), 0 neither
  PairLine* line = nullptr;
  std::int64_t seq = 0;
};

Channel& channel() {
  static Channel c;
  return c;
}

void set_up(Group& group, Channel& c) {
  c.set_up = true;
  const auto nodes = group.rank_nodes();
  int partner = -1;
  for (int r = 1; r < static_cast<int>(nodes.size()); ++r)
    if (nodes[r] == nodes[0]) {
      partner = r;
      break;
    }
  if (partner < 0) return;  // every rank sees the same nodes: none of them reads
  c.role = group.rank() == 0 ? 1 : group.rank() == partner ? 2 : 0;
  bool ok = true;
  void* page = MAP_FAILED;
  std::string name;
  if (c.role == 1) {
    name = "/commatlas-cpu-pair-" + std::to_string(getpid());
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ok = fd >= 0 && ftruncate(fd, sizeof(PairLine)) == 0;
    if (ok) page = mmap(nullptr, sizeof(PairLine), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    if (page != MAP_FAILED) c.line = new (page) PairLine();
  }
  const std::int64_t leader_pid = group.broadcast(c.role == 1 && page != MAP_FAILED ? getpid() : -1);
  if (leader_pid < 0) return;
  if (c.role == 2) {
    name = "/commatlas-cpu-pair-" + std::to_string(leader_pid);
    const int fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd >= 0) page = mmap(nullptr, sizeof(PairLine), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    ok = page != MAP_FAILED;
    if (ok) c.line = static_cast<PairLine*>(page);
  }
  c.usable = group.all(ok && (c.role == 0 || c.line != nullptr));
  if (c.role == 1) shm_unlink(name.c_str());  // both have it mapped now (or never will)
}

}  // namespace

std::optional<CpuPairChoice> first_two_cpus() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
  CpuPairChoice pair;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    if (pair.a < 0) {
      pair.a = c;
    } else {
      pair.b = c;
      return pair;
    }
  }
  return std::nullopt;
}

std::optional<CpuRoundTrip> cpu_pair_round_trip(Group& group) {
  if (group.size() == 1) return within_this_process();
  Channel& c = channel();
  if (!c.set_up) set_up(group, c);
  if (!c.usable) return std::nullopt;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(kAnswerWithin_s));
  std::optional<double> ns;
  bool ok = true;
  const int cpu = sched_getcpu();
  if (c.role == 1) {
    ns = lead_reading(*c.line, c.seq, deadline);
    ok = ns.has_value();
  } else if (c.role == 2) {
    ok = follow_reading(*c.line, c.seq, deadline);
  }
  if (!ok && c.role != 0) c.line->flag.store(kGaveUp, std::memory_order_release);  // the other stops too
  // A side that gave up leaves the flag's count behind the other's: no later reading can be trusted.
  c.usable = group.all(ok);
  if (!c.usable || c.role != 1) return std::nullopt;
  return CpuRoundTrip{cpu, c.line->partner_cpu.load(std::memory_order_relaxed), *ns};
}

}  // namespace commatlas
