// NVSHMEM as a mechanism of its own: one MPI rank per GPU, every rank a PE of one NVSHMEM job
// (initialised once, on first use, from a unique ID that rank 0 makes and the engine's MPI group
// broadcasts: no NVSHMEM bootstrap plugin has to match this MPI), each rank's inbox in the symmetric
// heap (nvshmem_malloc). Ranks 0 and 1 then move messages from persistent kernels only, with the
// calls an NVSHMEM user makes:
//
//   ping-pong   put=block: the message is cut into slices, one per CTA; each CTA puts its slice
//               with nvshmemx_putmem_signal_nbi_block, which adds 1 to the peer's signal word once
//               the slice is delivered; every CTA of the peer waits with nvshmem_signal_wait_until
//               until the word counts every slice of the message, then the peer answers the same
//               way. put=thread: one thread puts the whole message with nvshmem_putmem_signal_nbi
//               (messages up to kNvshmemThreadPutMaxBytes).
//   bandwidth   back-to-back messages, each CTA putting its slice with a signal per slice
//               (putmem_signal_nbi_block, add 1); the receiver's kernel waits for every slice of
//               each message and answers with a signal of its own (nvshmemx_signal_op, set), and a
//               CTA puts its slice of a message only after that answer for the message before:
//               the sender never overwrites bytes the receiver has not yet seen arrive. A sample
//               ends when the answer to its last message has reached the sender.
//
// Rank 0's %globaltimer stamps the sample boundaries; nothing is launched inside the timed loop.
// NVSHMEM's waits have no timeout: a peer that never answers holds the kernel until the run's
// watchdog (--watchdog) ends the job. The planted no-op (COMMATLAS_TEST_SKIP_MOVE) raises the
// signals without putting a byte, so the data check fails; the planted missing peer
// (COMMATLAS_TEST_NVSHMEM_NO_PEER: rank 1 launches nothing) must end in the watchdog's error record.
//
// This header is the part without NVSHMEM or CUDA (built everywhere, unit-tested without a GPU):
// the words, the refusals, the variants and their movement, and the registration's hook. The
// transport itself is transport/nvshmem_transport_nvshmem.cu, built only where CMake found NVSHMEM.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/benchmark.h"
#include "core/movement.h"
#include "core/params.h"
#include "transport/transport.h"

namespace commatlas {

// Threads of every CTA (the block-scoped puts copy with all of them).
inline constexpr int kNvshmemThreads = 512;
// put=thread: one thread copies the whole message; past this it is no way anyone moves a message.
inline constexpr std::size_t kNvshmemThreadPutMaxBytes = 64 << 10;
// Samples are read with %globaltimer, whose update interval is up to 1 us on some GPUs: samples
// of at least 100 us keep that under 1% of each.
inline constexpr double kNvshmemMinSampleSeconds = 100e-6;

// Who puts a ping-pong message: every thread of a CTA per slice, or one thread.
enum class NvshmemPut { Block, Thread };
const char* to_string(NvshmemPut p);
NvshmemPut nvshmem_put_from_string(const std::string& text);  // throws UsageError

// Why `put` does not carry a message of `bytes`, or nullopt.
std::optional<std::string> nvshmem_refuse_size(NvshmemPut put, std::size_t bytes);

// Why NVSHMEM cannot run between ranks 0 and 1 of this job, or nullopt: `missing` is why the
// engine was built without it ("" when built), then the job's shape (an MPI job of `ranks` ranks,
// `local_ranks` of them on this node, `gpus` GPUs visible).
std::optional<std::string> nvshmem_refuse_job(const std::string& missing, bool mpi_job, int ranks, int local_ranks,
                                              int gpus);

// NVSHMEM's environment as this engine sets it where the user has not (read at initialisation):
// no NVLink multicast (NVLS: the lent machines keep it off, and nothing here uses it), no remote
// transport (ranks 0 and 1 reach each other by P2P or not at all: an IB transport would only
// cost), no NCCL inside NVSHMEM, and a symmetric heap that holds the largest inbox.
std::vector<std::pair<std::string, std::string>> nvshmem_environment_defaults();

// The record's words: a ping-pong of `bytes` over `ctas` CTAs, a one-way stream.
Accounting nvshmem_pingpong_accounting(NvshmemPut put, std::size_t bytes, int ctas);
Accounting nvshmem_stream_accounting(std::size_t bytes, int ctas);

// The variants (ranks 0 and 1, their GPUs "0,1", persistent kernels): the ping-pong per put, the
// one-way bandwidth with block puts.
std::vector<Params> nvshmem_variants(bool pingpong);
// Device memory of rank 0's GPU to the peer's symmetric heap (allocator nvshmem_malloc).
Movement nvshmem_movement(bool pingpong, const Params& variant);
BenchmarkInfo nvshmem_info(bool pingpong);

// The transport's maker, set at static initialisation by nvshmem_transport_nvshmem.cu where this
// engine was built with NVSHMEM (null otherwise); `unavailable` says why it cannot run here at run
// time (no GPU driver, ...), or nullopt.
struct NvshmemBuilt {
  std::function<std::optional<std::string>(const Context&)> unavailable;
  TransportMaker make;
};
NvshmemBuilt& nvshmem_built();

}  // namespace commatlas
