// NCCL's device-initiated API (NCCL 2.28+, nccl_device.h) as a mechanism of its own: one MPI rank
// per GPU, a communicator of NCCL's, a symmetric memory window on each rank (ncclMemAlloc +
// ncclCommWindowRegister) and a device communicator (ncclDevCommCreate) whose resources the kernels
// use. Ranks 0 and 1 then move messages from persistent kernels only, with NCCL's primitives:
//
//   signal=lsa_barrier  each CTA stores its slice of the message into the peer's window through
//                       the LSA (load/store accessible) pointer NCCL gives (ncclGetPeerPointer),
//                       then syncs an LSA barrier it shares with the peer's CTA of the same index
//                       (ncclLsaBarrierSession<ncclCoopCta>::sync: release on arrival, acquire on
//                       the wait, system scope). A receiver's CTAs then meet in a grid barrier of
//                       their own GPU, so an answer leaves only after the whole message is in.
//   signal=ll           messages up to kNcclLlMaxBytes by NCCL's LL protocol (ncclLLA2ASession, one
//                       CTA): each 16-byte store into the peer's slots carries 8 payload bytes and
//                       the epoch twice, so the receiver polls the data itself and needs no fence.
//
// The ping-pong runs every round trip of a batch in one kernel per GPU (rank 0's %globaltimer at
// the sample boundaries, nothing launched inside the timed loop), as the GPU-initiated mechanism's
// persistent mode does; the one-way bandwidth streams messages, each CTA syncing its barrier once
// per message, and a sample ends when every receiving CTA's arrival after the sample's last
// message has reached the sender.
//
// NCCL's waits have no timeout: a peer that never arrives holds the kernel until the run's
// watchdog (--watchdog) ends the job. The planted no-op (COMMATLAS_TEST_SKIP_MOVE) syncs without
// storing the payload (LL: sends zeros and copies nothing out), so the data check fails; the
// planted missing peer (COMMATLAS_TEST_NCCL_DEVICE_NO_PEER: rank 1 launches nothing) must end in
// the watchdog's error record.
//
// This header is the part without NCCL or CUDA (built everywhere, unit-tested without a GPU): the
// words, the version gate, the slicing, the variants and their movement. The transport and its
// registration are transport/nccl_device_transport_nccl.cu.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"
#include "core/movement.h"
#include "core/params.h"

namespace commatlas {

// Threads of every CTA; the LL protocol's one CTA carries one 8-byte pack per thread.
inline constexpr int kNcclDeviceThreads = 512;
inline constexpr int kNcclLlPacks = kNcclDeviceThreads;
inline constexpr std::size_t kNcclLlMaxBytes = 8 * static_cast<std::size_t>(kNcclLlPacks);
// The smallest slice one CTA stores before it syncs: smaller messages take fewer CTAs.
inline constexpr std::size_t kMinCtaSliceBytes = 16 << 10;
// Samples are read with %globaltimer, whose update interval is up to 1 us on some GPUs: samples
// of at least 100 us keep that under 1% of each.
inline constexpr double kNcclDeviceMinSampleSeconds = 100e-6;
// The first NCCL with the device API, and the first that keeps device code compatible with later
// releases (NCCL_VERSION codes).
inline constexpr int kNcclFirstDeviceApi = 22800;
inline constexpr int kNcclFirstCompatibleDeviceCode = 22900;

// How the arrival of a message is made known to the peer.
enum class NcclDeviceSignal { LsaBarrier, Ll };
const char* to_string(NcclDeviceSignal s);
NcclDeviceSignal nccl_device_signal_from_string(const std::string& text);  // throws UsageError

// How a message is shared among CTAs: CTA b stores bytes [b * slice_bytes, (b + 1) * slice_bytes),
// the last one fewer; slice_bytes is a multiple of 16 (16-byte stores stay aligned).
struct CtaSlicing {
  int ctas = 1;
  std::size_t slice_bytes = 0;
};
CtaSlicing cta_slicing(std::size_t bytes, int max_ctas);

// Why an engine built without nccl_device.h has no device API (`compiled`: the NCCL_VERSION_CODE
// of the headers it was built with).
std::string nccl_no_device_api(int compiled);
// Why device code compiled against NCCL `compiled` must not run with the loaded NCCL `loaded`, or
// nullopt. NCCL 2.28 keeps device code compatible only with the release it was compiled against
// (its structures grew between 2.28 releases); from 2.29, with later releases.
std::optional<std::string> nccl_device_code_unusable(int compiled, int loaded);
// Why `signal` cannot carry a message of `bytes`, or nullopt.
std::optional<std::string> nccl_device_refuse_size(NcclDeviceSignal signal, std::size_t bytes);

// The record's words: a ping-pong of `bytes` over `ctas` CTAs, a one-way stream.
Accounting nccl_device_pingpong_accounting(NcclDeviceSignal signal, std::size_t bytes, int ctas);
Accounting nccl_device_stream_accounting(std::size_t bytes, int ctas);

// The variants (ranks 0 and 1, their GPUs "0,1", persistent kernels): the ping-pong per signal,
// the one-way bandwidth over the LSA barrier.
std::vector<Params> nccl_device_variants(bool pingpong);
// Device memory of rank 0's GPU to the peer's symmetric window (ncclMemAlloc: allocator nccl_mem).
Movement nccl_device_movement(bool pingpong, const Params& variant);
BenchmarkInfo nccl_device_info(bool pingpong);

}  // namespace commatlas
