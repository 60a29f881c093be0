#include "backends/cuda/event_timing.h"

#include <algorithm>
#include <atomic>

namespace commatlas::cuda {
namespace {

// Spins until the host writes 1 to *release, or until the timeout passes (so a host that died
// between launch and release cannot wedge the GPU); *timed_out tells the host which happened.
__global__ void spin_until_released(volatile int* release, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = device_time_ns();
  while (*release == 0) {
    if (device_time_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// Host-mapped flags shared by every GPU (portable + mapped pinned memory): allocated once.
struct ReleaseFlags {
  int* host = nullptr;
  ReleaseFlags() { COMMATLAS_GPU_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), 2 * sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped)); }
};

ReleaseFlags& release_flags() {
  static ReleaseFlags flags;
  return flags;
}

// Operations queued behind the spin kernel per batch. A stream's queue is finite: enqueueing more
// than it holds would block the host before it releases the kernel, a deadlock. 256 entries stay
// well inside every driver's queue.
constexpr std::int64_t kMaxQueuedEntries = 256;

}  // namespace

void time_event_samples(const std::vector<const Stream*>& streams, std::int64_t samples, std::int64_t ops,
                        std::vector<double>& seconds, const std::function<void(std::size_t)>& enqueue,
                        LaunchMode mode) {
  const Stream& primary = *streams.at(0);
  const std::int64_t n = static_cast<std::int64_t>(streams.size());
  const std::int64_t entries_per_sample = ops * n + 2 * n + 2;
  // One spin per batch of samples that fits in the queue; batches of one when a sample alone is too long.
  const bool blocked = mode == LaunchMode::BlockedStart && entries_per_sample <= kMaxQueuedEntries;
  const std::int64_t batch = blocked ? std::max<std::int64_t>(1, kMaxQueuedEntries / entries_per_sample) : 1;

  std::vector<Event> start, stop;
  std::vector<std::vector<Event>> done(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < batch; ++i) {
    start.emplace_back(primary.device());
    stop.emplace_back(primary.device());
    for (std::int64_t s = 1; s < n; ++s) done[s].emplace_back(streams[s]->device(), cudaEventDisableTiming);
  }

  ReleaseFlags& flags = release_flags();
  int* device_flags = nullptr;
  COMMATLAS_GPU_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), flags.host, 0));
  seconds.reserve(seconds.size() + static_cast<std::size_t>(samples));

  for (std::int64_t first = 0; first < samples; first += batch) {
    const std::int64_t count = std::min(batch, samples - first);
    if (blocked) {
      DeviceScope scope(primary.device());
      reinterpret_cast<volatile int*>(flags.host)[0] = 0;
      reinterpret_cast<volatile int*>(flags.host)[1] = 0;
      spin_until_released<<<1, 1, 0, primary.get()>>>(device_flags, device_flags + 1, 10ull * 1000 * 1000 * 1000);
      COMMATLAS_GPU_CHECK_LAUNCH();
    }
    for (std::int64_t i = 0; i < count; ++i) {
      COMMATLAS_GPU_CHECK(cudaEventRecord(start[i].get(), primary.get()));
      for (std::int64_t s = 1; s < n; ++s) COMMATLAS_GPU_CHECK(cudaStreamWaitEvent(streams[s]->get(), start[i].get(), 0));
      for (std::int64_t k = 0; k < ops; ++k)
        for (std::int64_t s = 0; s < n; ++s) enqueue(static_cast<std::size_t>(s));
      for (std::int64_t s = 1; s < n; ++s) {
        COMMATLAS_GPU_CHECK(cudaEventRecord(done[s][i].get(), streams[s]->get()));
        COMMATLAS_GPU_CHECK(cudaStreamWaitEvent(primary.get(), done[s][i].get(), 0));
      }
      COMMATLAS_GPU_CHECK(cudaEventRecord(stop[i].get(), primary.get()));
    }
    if (blocked) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      reinterpret_cast<volatile int*>(flags.host)[0] = 1;
    }
    for (const Stream* s : streams) s->synchronize();
    if (blocked && reinterpret_cast<volatile int*>(flags.host)[1] != 0)
      throw MeasurementError("the start-blocking kernel timed out before the host released it (enqueue took > 10 s)");
    for (std::int64_t i = 0; i < count; ++i) {
      float ms = 0;
      COMMATLAS_GPU_CHECK(cudaEventElapsedTime(&ms, start[i].get(), stop[i].get()));
      seconds.push_back(static_cast<double>(ms) * 1e-3 / static_cast<double>(ops));
    }
  }
}

}  // namespace commatlas::cuda
