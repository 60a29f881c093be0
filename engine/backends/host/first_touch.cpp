#include "backends/host/first_touch.h"

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "backends/host/numa.h"

namespace commatlas::host {

void touch_in_parallel(std::size_t bytes, const std::vector<int>& cpus,
                       const std::function<void(std::size_t, std::size_t)>& part) {
  if (bytes == 0) return;
  if (cpus.empty()) {
    part(0, bytes);
    return;
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
  const std::size_t pages = (bytes + page - 1) / page;
  std::size_t threads = bytes < kParallelTouchFrom ? 1 : std::min<std::size_t>(cpus.size(), kMaxTouchThreads);
  threads = std::max<std::size_t>(1, std::min(threads, pages));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    // Whole pages per thread, so no page is first written by two threads.
    const std::size_t begin = std::min(bytes, pages * t / threads * page);
    const std::size_t end = std::min(bytes, pages * (t + 1) / threads * page);
    workers.emplace_back([&, begin, end] {
      try {
        try {
          bind_this_thread(cpus);
        } catch (const std::exception&) {
          // Unbindable thread (a container's CPU limits): libnuma-bound pages still land on their
          // node, and others where this thread runs, as a single toucher's would have.
        }
        if (end > begin) part(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

void touch_from_this_node(std::size_t bytes, const std::function<void(std::size_t, std::size_t)>& part) {
  if (bytes < kParallelTouchFrom) {
    if (bytes > 0) part(0, bytes);
    return;
  }
  touch_in_parallel(bytes, cpus_of_current_node(), part);
}

}  // namespace commatlas::host
