// The memory an MPI message lives in, separate from the protocol that moves it.
//
// Protocols (ping-pong, windowed bandwidth, collectives) are written once against
// MessageBuffers. Host memory is the only kind today; GPU kinds plug in here:
//   StagedDevice: the message lives in device memory and MPI sees a host staging buffer, so the
//                 timed operation includes stage_before_send (D2H) and stage_after_receive (H2D);
//   Device:       MPI is handed device pointers (only when mpi_cuda_support() says so).
// Filling the source and checking the destination happen outside the timed loop through
// host-visible views, so the data check is the same code for every kind.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace commatlas::mpi {

enum class MessageMemory { Host, StagedDevice, Device };

std::string to_string(MessageMemory memory);

struct MessageSizes {
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
};

class MessageBuffers {
 public:
  virtual ~MessageBuffers() = default;
  virtual MessageMemory memory() const = 0;
  // Where the message lives, in words, for the record's timing and latency descriptions.
  virtual std::string describe() const = 0;
  std::size_t send_bytes() const { return sizes_.send_bytes; }
  std::size_t recv_bytes() const { return sizes_.recv_bytes; }

  // What MPI reads from and writes into.
  virtual void* send_data() = 0;
  virtual void* recv_data() = 0;
  // Where the message lives (the staged kinds' GPU buffers; MPI's own buffers otherwise): what an
  // application computes on before it sends and after it receives.
  virtual void* send_home() { return send_data(); }
  virtual void* recv_home() { return recv_data(); }

  // Part of the timed operation: moves the message between where it lives and where MPI sees
  // it. Nothing to do for host memory.
  virtual void stage_before_send() {}
  virtual void stage_after_receive() {}

  // Outside the timed loop. Write the source through send_view(), then publish_send().
  virtual unsigned char* send_view() = 0;
  virtual void publish_send() {}
  // What the destination holds now, readable on the host.
  virtual const unsigned char* fetch_recv() = 0;
  // Overwrites the destination (its first recv_bytes()) with bytes no sender writes, so a message
  // that never arrived cannot pass the data check on a previous run's bytes.
  virtual void poison_recv() = 0;

  // Works on the first `sizes` of the buffers from now on, the destination poisoned, so a size
  // sweep runs inside the buffers made for its largest size. The source keeps what was last
  // published: callers whose data is a function of the element's index (core/pattern.h, the
  // collectives' source values) find it already right for the smaller size. False, changing
  // nothing, past the sizes the buffers were made with or where reused memory is not the same
  // measurement (reusable()).
  bool resize(MessageSizes sizes);

 protected:
  explicit MessageBuffers(MessageSizes sizes) : sizes_(sizes), capacity_(sizes) {}
  // Managed memory: where its pages live depends on what touched them last (the larger size's
  // messages), so a smaller size inside it measures a different placement than a fresh buffer.
  virtual bool reusable() const { return true; }

 public:
  // Device memory moved through MPI (StagedDevice, Device): this process's 8 B synchronous copy
  // level now, microseconds (backends/cuda/copy_level.h), which the library's copies of a small
  // device message, or the staging copies, pay; nullopt for host memory. The workloads that move
  // these buffers set Accounting::copy_level_witness from memory() and answer with this.
  virtual std::optional<double> copy_level_us() { return std::nullopt; }

 private:
  MessageSizes sizes_;
  MessageSizes capacity_;
};

// Allocates both buffers (page-aligned, touched). Throws std::bad_alloc when memory is short.
std::unique_ptr<MessageBuffers> make_message_buffers(MessageMemory memory, MessageSizes sizes);

// Makes one rank's buffers of a kind that needs more than MessageMemory says (GPU kinds need an
// allocator and a device: backends/mpi/gpu_message_buffers_mpi.cu). Protocols take one of these
// when set, make_message_buffers(memory) otherwise.
using MessageBufferMaker = std::function<std::unique_ptr<MessageBuffers>(MessageSizes)>;

}  // namespace commatlas::mpi
