// How a pattern's bytes move: one interface the patterns (patterns_mpi.cpp) are written against
// once, with one implementation per mechanism in its own file, so that each file builds only
// where its backend is (core/movement.h names the mechanisms):
//   mechanism_mpi.cpp        MPI on host buffers (no CUDA needed)
//   mechanism_gpu_mpi.cu     MPI staged through host memory, GPU-aware MPI, CUDA IPC
//   mechanism_nccl_mpi.cu    NCCL, one rank per GPU
// A mechanism owns the memory the pattern works in (host memory, or the rank's GPU), the
// application's work on it (packing faces, a compute kernel) and the exchanges. Each file
// registers its benchmarks with register_pattern_benchmarks() at static initialisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/pattern/geometry.h"
#include "core/benchmark.h"
#include "core/movement.h"

namespace commatlas {

// One message of an exchange: `bytes` at `offset` of this rank's send (or receive) buffer,
// to (from) `peer`, matched by `tag`; `remote_offset` is where it lands in the peer's receive
// buffer (mechanisms that write into the peer's memory need it).
struct PeerMessage {
  int peer = 0;
  int tag = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::size_t remote_offset = 0;
};

class PatternMechanism {
 public:
  virtual ~PatternMechanism() = default;
  // Where the pattern's buffers live, in words, for the record's latency description.
  virtual std::string describe() const = 0;

  // Exchange buffers in this mechanism's memory (what pack writes and unpack reads), sized once.
  virtual void* send_home() = 0;
  virtual void* recv_home() = 0;
  // More memory of the same kind (the halo grid), owned by the mechanism.
  virtual void* allocate(std::size_t bytes) = 0;
  // Outside the timed loop: host <-> mechanism memory.
  virtual void upload(void* dst, const void* host, std::size_t bytes) = 0;
  virtual void download(void* host, const void* src, std::size_t bytes) = 0;
  virtual void fill(void* dst, unsigned char byte, std::size_t bytes) = 0;

  // The application's work around the messages: faces gathered into the send buffer, the
  // receive buffer scattered into the ghost cells (GPU kernels on GPU mechanisms), done on return.
  virtual void pack(const HaloGeometry& g, const double* grid, void* send) = 0;
  virtual void unpack(const HaloGeometry& g, const void* recv, double* grid) = 0;

  // Every message sent and received; done (received data in place) on return.
  virtual void exchange(const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs) = 0;
  // One 8-byte count to each send peer and from each receive peer (recv_counts sized by the caller).
  virtual void exchange_counts(const std::vector<PeerMessage>& sends, const std::vector<std::uint64_t>& send_counts,
                               const std::vector<PeerMessage>& recvs, std::vector<std::uint64_t>& recv_counts) = 0;
  // Sum over ranks of `count` floats; may be left in flight until finish().
  virtual void allreduce(const float* send, float* recv, std::size_t count) = 0;
  virtual void finish() {}
};

// Makes the mechanism for one workload: exchange buffers of the given sizes. Throws Skip with the
// reason when it cannot run here (GPU-aware MPI on a library without CUDA support, ...).
using MechanismMaker = std::function<std::unique_ptr<PatternMechanism>(Context&, std::size_t send_bytes,
                                                                       std::size_t recv_bytes)>;

struct MechanismSpec {
  Mechanism mechanism;
  std::string key;    // "mpi", "staged", "gpu_aware", "ipc", "nccl": the benchmark key's last part
  std::string suite;  // "mpi" or "mpi-gpu"
  bool on_gpu = false;
  bool collectives = true;  // can run the bucketed allreduce (CUDA IPC cannot)
  // Why this mechanism cannot run in this context (before anything is allocated), or nullopt.
  std::function<std::optional<std::string>(const Context&)> unavailable;
  // The GPU this rank works on (GPU mechanisms), for the movement record.
  std::function<int(const Context&)> gpu;
  MechanismMaker make;
};

// Adds pattern.halo2d.<key>, pattern.halo3d.<key>, pattern.neighbor.<key> and (when
// spec.collectives) pattern.bucketed_allreduce.<key> to the registry.
bool register_pattern_benchmarks(const MechanismSpec& spec);

// A GPU compute kernel of a given duration on a stream of its own, so the bucketed allreduce
// can overlap with it. Registered by mechanism_gpu_mpi.cu (CUDA builds); null otherwise.
struct GpuCompute {
  virtual ~GpuCompute() = default;
  virtual void start(double microseconds) = 0;  // launches, returns at once
  virtual void wait() = 0;                      // until the kernel is done
};
using GpuComputeMaker = std::unique_ptr<GpuCompute> (*)(Context&);
GpuComputeMaker& gpu_compute_maker();

}  // namespace commatlas
