#include "backends/mpi/message_buffers.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"

namespace commatlas::mpi {
namespace {

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};
using HostBytes = std::unique_ptr<unsigned char[], FreeDeleter>;

HostBytes allocate_host(std::size_t bytes) {
  // Page alignment: what MPI libraries and DMA engines are fastest on, and what a later
  // cudaHostRegister needs.
  constexpr std::size_t page = 4096;
  void* p = nullptr;
  if (posix_memalign(&p, page, bytes == 0 ? page : bytes) != 0) throw std::bad_alloc();
  return HostBytes(static_cast<unsigned char*>(p));
}

class HostMessageBuffers final : public MessageBuffers {
 public:
  explicit HostMessageBuffers(MessageSizes sizes)
      : MessageBuffers(sizes), send_(allocate_host(sizes.send_bytes)), recv_(allocate_host(sizes.recv_bytes)) {
    // Touch every page now, so first-touch page faults never land in a timed operation.
    std::memset(send_.get(), 0, sizes.send_bytes);
    poison_recv();
  }
  MessageMemory memory() const override { return MessageMemory::Host; }
  std::string describe() const override { return "host buffers (malloc, page-aligned)"; }
  void* send_data() override { return send_.get(); }
  void* recv_data() override { return recv_.get(); }
  unsigned char* send_view() override { return send_.get(); }
  const unsigned char* fetch_recv() override { return recv_.get(); }
  void poison_recv() override { std::memset(recv_.get(), 0xFF, recv_bytes()); }

 private:
  HostBytes send_;
  HostBytes recv_;
};

}  // namespace

std::string to_string(MessageMemory memory) {
  switch (memory) {
    case MessageMemory::Host: return "host";
    case MessageMemory::StagedDevice: return "staged_device";
    case MessageMemory::Device: return "device";
  }
  return "?";
}

bool MessageBuffers::resize(MessageSizes sizes) {
  if (!reusable() || sizes.send_bytes > capacity_.send_bytes || sizes.recv_bytes > capacity_.recv_bytes) return false;
  sizes_ = sizes;
  // The destination's prefix holds the larger size's message, which a receive that did nothing
  // would pass.
  poison_recv();
  return true;
}

std::unique_ptr<MessageBuffers> make_message_buffers(MessageMemory memory, MessageSizes sizes) {
  switch (memory) {
    case MessageMemory::Host: return std::make_unique<HostMessageBuffers>(sizes);
    case MessageMemory::StagedDevice:
    case MessageMemory::Device:
      throw MeasurementError("GPU message buffers need an allocator and a GPU: pass a MessageBufferMaker");
  }
  return nullptr;
}

}  // namespace commatlas::mpi
