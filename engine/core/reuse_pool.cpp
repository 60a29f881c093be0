#include "core/reuse_pool.h"

#include <utility>
#include <vector>

namespace commatlas {

ReusePool::ReusePool(std::size_t cap_bytes, std::function<void(void*)> release)
    : cap_bytes_(cap_bytes), release_(std::move(release)) {}

ReusePool::~ReusePool() {
  for (const Kept& k : kept_) release_(k.ptr);
}

void* ReusePool::take(std::size_t bytes, int node) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->bytes != bytes || it->node != node) continue;
    void* ptr = it->ptr;
    kept_bytes_ -= it->bytes;
    kept_.erase(it);
    return ptr;
  }
  return nullptr;
}

void ReusePool::give(void* ptr, std::size_t bytes, int node) {
  if (!ptr) return;
  std::vector<void*> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > cap_bytes_) {
      released.push_back(ptr);
    } else {
      while (kept_bytes_ + bytes > cap_bytes_) {
        released.push_back(kept_.front().ptr);
        kept_bytes_ -= kept_.front().bytes;
        kept_.pop_front();
      }
      kept_.push_back({ptr, bytes, node});
      kept_bytes_ += bytes;
    }
  }
  for (void* p : released) release_(p);  // outside the lock: freeing may take a while
}

std::size_t ReusePool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

}  // namespace commatlas
