#include "backends/cuda/memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <unistd.h>

#include "backends/host/first_touch.h"
#include "core/process_state.h"
#include "core/reuse_pool.h"

namespace commatlas::cuda {
namespace {

// Pinned buffers kept for reuse (core/reuse_pool.h says why): up to 1 GiB, or a 64th of the host's
// memory where that is less, so that the locked pages every rank's pool holds (eight ranks on a
// node: an eighth of its memory at most) never crowd out what a benchmark asks for. Never
// destroyed: at exit the CUDA runtime may be gone before a static destructor could free through
// it, and the process's end unpins everything anyway.
ReusePool& pinned_pool() {
  static ReusePool* const pool = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    std::size_t cap = std::size_t{1} << 30;
    if (pages > 0 && page > 0)
      cap = std::min(cap, static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 64);
    return new ReusePool(cap, [](void* p) { cudaFreeHost(p); });
  }();
  return *pool;
}

// The NUMA node the calling thread runs on (where cudaHostAlloc's pages land); -1 if unknown.
int current_node() {
  unsigned cpu = 0, node = 0;
  return getcpu(&cpu, &node) == 0 ? static_cast<int>(node) : -1;
}

}  // namespace

Allocator allocator_of(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Device: return Allocator::Device;
    case MemoryKind::DevicePool: return Allocator::DevicePool;
    case MemoryKind::Pinned: return Allocator::Pinned;
    case MemoryKind::Registered: return Allocator::Registered;
    case MemoryKind::Pageable: return Allocator::Pageable;
    case MemoryKind::Managed: return Allocator::Managed;
  }
  return Allocator::Device;
}

MemoryKind memory_kind_of(Allocator allocator) {
  for (MemoryKind k : {MemoryKind::Device, MemoryKind::DevicePool, MemoryKind::Pinned, MemoryKind::Registered,
                       MemoryKind::Pageable, MemoryKind::Managed})
    if (allocator_of(k) == allocator) return k;
  throw UsageError("allocator '" + to_string(allocator) + "' is not one the GPU runtime makes");
}

bool is_host_memory(MemoryKind kind) { return memory_of(allocator_of(kind)) == Memory::Host; }

DeviceScope::DeviceScope(int device) {
  COMMATLAS_GPU_CHECK(cudaGetDevice(&previous_));
  COMMATLAS_GPU_CHECK(cudaSetDevice(device));
}

DeviceScope::DeviceScope(int device, NoThrow) noexcept {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  cudaSetDevice(device);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Stream::Stream(int device) : device_(device) {
  DeviceScope scope(device);
  COMMATLAS_GPU_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

Stream::~Stream() {
  if (stream_) {
    DeviceScope scope(device_, DeviceScope::NoThrow{});
    cudaStreamDestroy(stream_);
  }
}

Stream::Stream(Stream&& other) noexcept : stream_(other.stream_), device_(other.device_) { other.stream_ = nullptr; }

void Stream::synchronize() const { COMMATLAS_GPU_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event(int device, unsigned flags) {
  DeviceScope scope(device);
  COMMATLAS_GPU_CHECK(cudaEventCreateWithFlags(&event_, flags));
}

Event::~Event() {
  if (event_) cudaEventDestroy(event_);
}

Event::Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }

GpuBuffer::GpuBuffer(MemoryKind kind, std::size_t bytes, int device) : kind_(kind), bytes_(bytes), device_(device) {
  DeviceScope scope(device);
  switch (kind) {
    case MemoryKind::Device: {
      std::size_t free_bytes = 0, total = 0;
      COMMATLAS_GPU_CHECK(cudaMemGetInfo(&free_bytes, &total));
      if (bytes > free_bytes)
        throw Skip("GPU " + std::to_string(device) + " has " + std::to_string(free_bytes) + " bytes free, need " +
                   std::to_string(bytes));
      COMMATLAS_GPU_CHECK(cudaMalloc(&ptr_, bytes));
      break;
    }
    case MemoryKind::DevicePool: {
      cudaStream_t s = nullptr;
      COMMATLAS_GPU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      const cudaError_t rc = cudaMallocAsync(&ptr_, bytes, s);
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
      COMMATLAS_GPU_CHECK(rc);
      break;
    }
    case MemoryKind::Pinned:
      node_ = current_node();
      ptr_ = pinned_pool().take(bytes, node_);
      if (!ptr_) COMMATLAS_GPU_CHECK(cudaHostAlloc(&ptr_, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
      break;
    case MemoryKind::Registered: {
      const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
      const std::size_t rounded = (bytes + page - 1) / page * page;
      ptr_ = map_fresh_pages(rounded);
      if (!ptr_) throw Skip("host allocation of " + std::to_string(bytes) + " bytes failed");
      // Registration pins pages: they must exist first (written from this thread's node, in
      // parallel above a size: backends/host/first_touch.h).
      auto* pages = static_cast<unsigned char*>(ptr_);
      host::touch_from_this_node(rounded, [pages](std::size_t begin, std::size_t end) {
        std::memset(pages + begin, 0, end - begin);
      });
      const cudaError_t rc = cudaHostRegister(ptr_, rounded, cudaHostRegisterPortable | cudaHostRegisterMapped);
      if (rc != cudaSuccess) {
        unmap_pages(ptr_, rounded);
        ptr_ = nullptr;
        cudaGetLastError();
        // Seen on VMs that cap locked memory: a limit of the machine, not a fault of the benchmark.
        throw Skip("cudaHostRegister failed: " + std::string(cudaGetErrorString(rc)));
      }
      break;
    }
    case MemoryKind::Pageable: {
      // Fresh pages, never the heap's: the first touch (by the GPU or the CPU) is the benchmark's.
      ptr_ = map_fresh_pages(bytes);
      if (!ptr_) throw Skip("host allocation of " + std::to_string(bytes) + " bytes failed");
      break;
    }
    case MemoryKind::Managed: {
      // Never ask for more managed memory than the GPU has free: oversubscribing managed memory
      // can hang the GPU, not just this process.
      std::size_t free_bytes = 0, total = 0;
      COMMATLAS_GPU_CHECK(cudaMemGetInfo(&free_bytes, &total));
      if (bytes > free_bytes / 2)
        throw Skip("managed allocation of " + std::to_string(bytes) + " bytes refused: GPU " + std::to_string(device) +
                   " has " + std::to_string(free_bytes) + " bytes free (managed memory is kept under half of it)");
      COMMATLAS_GPU_CHECK(cudaMallocManaged(&ptr_, bytes, cudaMemAttachGlobal));
      break;
    }
  }
}

void* GpuBuffer::device_view() const {
  if (kind_ == MemoryKind::Pinned || kind_ == MemoryKind::Registered) {
    void* dev = nullptr;
    COMMATLAS_GPU_CHECK(cudaHostGetDevicePointer(&dev, ptr_, 0));
    return dev;
  }
  return ptr_;
}

void GpuBuffer::release() noexcept {
  if (!ptr_) return;
  DeviceScope scope(device_, DeviceScope::NoThrow{});
  switch (kind_) {
    case MemoryKind::Device:
    case MemoryKind::Managed: cudaFree(ptr_); break;
    case MemoryKind::DevicePool: {
      cudaStream_t s = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
        cudaFreeAsync(ptr_, s);
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
      }
      break;
    }
    case MemoryKind::Pinned:
      // What cudaFreeHost does first: nothing queued on the buffer's GPU may still copy into or out
      // of it once the next workload has it.
      cudaDeviceSynchronize();
      try {
        pinned_pool().give(ptr_, bytes_, node_);
      } catch (...) {
        cudaFreeHost(ptr_);  // no memory left to keep it with: free it as before
      }
      break;
    case MemoryKind::Registered:
      cudaHostUnregister(ptr_);
      unmap_pages(ptr_, bytes_);
      break;
    case MemoryKind::Pageable: unmap_pages(ptr_, bytes_); break;
  }
  ptr_ = nullptr;
}

GpuBuffer::~GpuBuffer() { release(); }

GpuBuffer::GpuBuffer(GpuBuffer&& other) noexcept
    : kind_(other.kind_), bytes_(other.bytes_), device_(other.device_), node_(other.node_), ptr_(other.ptr_) {
  other.ptr_ = nullptr;
}

namespace {
std::optional<int>& gpu_count_override() {
  static std::optional<int> n;
  return n;
}
}  // namespace

void override_gpu_count_for_tests(std::optional<int> n) { gpu_count_override() = n; }

int gpu_count() {
  if (gpu_count_override()) return *gpu_count_override();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace commatlas::cuda
