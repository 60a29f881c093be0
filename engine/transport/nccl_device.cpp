// The NCCL device-API mechanism's words, version gate, slicing and variants (nccl_device.h): no
// NCCL, no GPU runtime, so every build has them and the unit tests read them without a GPU.
#include "transport/nccl_device.h"

#include <algorithm>

#include "backends/nccl/nccl_release.h"
#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {

const char* to_string(NcclDeviceSignal s) { return s == NcclDeviceSignal::Ll ? "ll" : "lsa_barrier"; }

NcclDeviceSignal nccl_device_signal_from_string(const std::string& text) {
  if (text == "lsa_barrier") return NcclDeviceSignal::LsaBarrier;
  if (text == "ll") return NcclDeviceSignal::Ll;
  throw UsageError("signal '" + text + "' is not lsa_barrier or ll");
}

CtaSlicing cta_slicing(std::size_t bytes, int max_ctas) {
  CtaSlicing s;
  const std::size_t wanted = (bytes + kMinCtaSliceBytes - 1) / kMinCtaSliceBytes;
  s.ctas = static_cast<int>(std::clamp<std::size_t>(wanted, 1, static_cast<std::size_t>(std::max(max_ctas, 1))));
  const std::size_t per = (bytes + static_cast<std::size_t>(s.ctas) - 1) / static_cast<std::size_t>(s.ctas);
  s.slice_bytes = std::max<std::size_t>((per + 15) / 16 * 16, 16);
  // Rounding the slices up can leave the last CTAs nothing to store: drop them.
  s.ctas = static_cast<int>(std::max<std::size_t>((bytes + s.slice_bytes - 1) / s.slice_bytes, 1));
  return s;
}

std::string nccl_no_device_api(int compiled) {
  return "NCCL " + nccl::release_text(compiled) + " has no device API (needs 2.28+): this engine was built without "
         "nccl_device.h";
}

std::optional<std::string> nccl_device_code_unusable(int compiled, int loaded) {
  if (loaded < kNcclFirstDeviceApi)
    return "the loaded NCCL " + nccl::release_text(loaded) + " has no device API (needs 2.28+)";
  if (loaded < compiled)
    return "the loaded NCCL " + nccl::release_text(loaded) + " is older than the NCCL " + nccl::release_text(compiled) +
           " headers this engine's kernels were compiled against";
  if (compiled < kNcclFirstCompatibleDeviceCode && loaded != compiled)
    return "this engine's kernels were compiled against NCCL " + nccl::release_text(compiled) + " and NCCL " +
           nccl::release_text(loaded) + " is loaded: NCCL 2.28's device code runs only with the release it was "
           "compiled against (rebuild the engine against the loaded NCCL)";
  return std::nullopt;
}

std::optional<std::string> nccl_device_refuse_size(NcclDeviceSignal signal, std::size_t bytes) {
  if (signal == NcclDeviceSignal::Ll && bytes > kNcclLlMaxBytes)
    return "NCCL's LL protocol carries messages up to " + format_size(kNcclLlMaxBytes) + " here (one CTA of " +
           std::to_string(kNcclDeviceThreads) + " threads, an 8-byte pack each); signal=lsa_barrier carries larger ones";
  return std::nullopt;
}

namespace {

const char* const kRankWords = "; one MPI rank per GPU, rank 0's figure";

std::string window_words() {
  return "the peer's symmetric window (ncclMemAlloc memory registered with ncclCommWindowRegister, addressed "
         "through NCCL's LSA pointer)";
}

std::string ctas_words(int ctas) {
  return std::to_string(ctas) + (ctas == 1 ? " CTA" : " CTAs");
}

}  // namespace

Accounting nccl_device_pingpong_accounting(NcclDeviceSignal signal, std::size_t bytes, int ctas) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  a.min_sample_s = kNcclDeviceMinSampleSeconds;
  a.timing = std::string("%globaltimer of rank 0's GPU, read by its persistent kernel at each sample boundary: one "
                         "kernel per GPU runs every round trip of a batch after an untimed handshake, nothing "
                         "launched inside the timed loop; per-op time halved") + kRankWords;
  if (signal == NcclDeviceSignal::Ll) {
    a.latency_includes =
        "half a round trip, GPU to GPU through NCCL's device API, protocol LL (ncclLLA2ASession, one CTA, up to " +
        format_size(kNcclLlMaxBytes) +
        "): a kernel stores the message into the peer's LL slots in the device communicator's memory as 16-byte "
        "stores of 8 payload bytes and the epoch twice, no fence; the peer's kernel polls its slots until each "
        "carries the epoch, copies the payload into its inbox and answers the same way; no kernel launch, no host";
    return a;
  }
  a.latency_includes =
      "half a round trip, GPU to GPU through NCCL's device API, signal LSA barrier: a kernel stores the message "
      "into " + window_words() + " with " + ctas_words(ctas) +
      ", each then syncing an LSA barrier it shares with the peer's CTA of the same index "
      "(ncclLsaBarrierSession::sync: release on arrival, acquire on the wait, system scope); the peer's kernel "
      "waits at the barrier" +
      (ctas > 1 ? std::string(", its CTAs meet in a grid barrier of their GPU (the whole message is in),") : "") +
      " and answers the same way; no kernel launch, no host";
  return a;
}

Accounting nccl_device_stream_accounting(std::size_t bytes, int ctas) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  a.min_sample_s = kNcclDeviceMinSampleSeconds;
  a.timing = "%globaltimer of rank 0's GPU (the sender), read by its persistent kernel at each sample boundary: "
             "back-to-back messages, each CTA storing its slice into " + window_words() +
             " with 16-byte streaming stores and syncing its LSA barrier with the receiver's CTA once per message "
             "(release on arrival, acquire on the wait, system scope: a CTA runs at most one message ahead of its "
             "receiver); a sample ends when every receiving CTA's arrival after the sample's last message has "
             "reached the sender" + std::string(kRankWords);
  a.latency_includes = "one message stored by " + ctas_words(ctas) + " and synced at NCCL LSA barriers, no launch";
  return a;
}

std::vector<Params> nccl_device_variants(bool pingpong) {
  std::vector<Params> out;
  for (NcclDeviceSignal s : {NcclDeviceSignal::LsaBarrier, NcclDeviceSignal::Ll}) {
    if (!pingpong && s == NcclDeviceSignal::Ll) continue;  // a stream of large messages: the barrier's slices
    out.push_back(Params{{"gpus", std::string("0,1")},
                         {"direction", std::string(pingpong ? "half_round_trip" : "uni")},
                         {"launch_mode", std::string("persistent")},
                         {"signal", std::string(to_string(s))}});
  }
  return out;
}

Movement nccl_device_movement(bool pingpong, const Params& p) {
  Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device);
  Endpoint to = gpu_memory(gpu_of_rank(p, 1), Allocator::NcclMem);
  from.rank = 0;
  to.rank = 1;
  return movement_between(pingpong ? Operation::PingPong : Operation::SendRecv,
                          pingpong ? MoveDirection::HalfRoundTrip : MoveDirection::Uni, Mechanism::NcclDevice, from,
                          to, p, {"launch_mode", "signal"});
}

BenchmarkInfo nccl_device_info(bool pingpong) {
  return BenchmarkInfo{pingpong ? "nccl_device.pingpong" : "nccl_device.bandwidth",
                       Category::PointToPoint,
                       "mpi-gpu",
                       pingpong ? "NCCL device API ping-pong between ranks 0 and 1 (kernel stores into the peer's "
                                  "symmetric window + LSA barrier, or NCCL's LL), half round trip, persistent kernels"
                                : "NCCL device API one-way messages rank 0 -> rank 1 (stores into the peer's "
                                  "symmetric window, an LSA barrier per CTA per message), persistent kernels",
                       pingpong ? Metric::Latency : Metric::Bandwidth,
                       RankRange{2, 0},
                       pingpong ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30),
                       pingpong ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                                : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20},
                       {}};
}

}  // namespace commatlas
