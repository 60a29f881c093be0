// The NVSHMEM mechanism's words, refusals and variants, and its registration (nvshmem.h): no
// NVSHMEM, no GPU runtime, so every build lists nvshmem.* and the unit tests read them without a
// GPU. Where the engine was built without NVSHMEM, the benchmarks skip with CMake's reason.
#include "transport/nvshmem.h"

#include "build_info.h"
#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {

const char* to_string(NvshmemPut p) { return p == NvshmemPut::Thread ? "thread" : "block"; }

NvshmemPut nvshmem_put_from_string(const std::string& text) {
  if (text == "block") return NvshmemPut::Block;
  if (text == "thread") return NvshmemPut::Thread;
  throw UsageError("put '" + text + "' is not block or thread");
}

std::optional<std::string> nvshmem_refuse_size(NvshmemPut put, std::size_t bytes) {
  if (put == NvshmemPut::Thread && bytes > kNvshmemThreadPutMaxBytes)
    return "put=thread (one thread copies the whole message) carries messages up to " +
           format_size(kNvshmemThreadPutMaxBytes) + "; put=block carries larger ones";
  return std::nullopt;
}

std::optional<std::string> nvshmem_refuse_job(const std::string& missing, bool mpi_job, int ranks, int local_ranks,
                                              int gpus) {
  if (!missing.empty()) return "built without NVSHMEM (" + missing + ")";
  if (!mpi_job) return std::string("needs an MPI job with one rank per GPU (start the engine under mpiexec)");
  if (ranks < 2) return "NVSHMEM between ranks 0 and 1 needs 2 ranks, the job has " + std::to_string(ranks);
  if (gpus == 0) return std::string("no GPU visible (no CUDA device or driver)");
  if (gpus < 2 && local_ranks > 1) return "needs a GPU per rank, found " + std::to_string(gpus) + " GPU";
  if (local_ranks > gpus)
    return "more ranks on the node (" + std::to_string(local_ranks) + ") than GPUs (" + std::to_string(gpus) +
           "): NVSHMEM here pairs one GPU per rank";
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> nvshmem_environment_defaults() {
  return {{"NVSHMEM_DISABLE_NVLS", "1"},
          {"NVSHMEM_REMOTE_TRANSPORT", "none"},
          // NVSHMEM's collectives are not measured here: no NCCL communicator of its own at init
          // (and no second NCCL loaded beside the engine's).
          {"NVSHMEM_DISABLE_NCCL", "1"},
          // 2 GiB: the largest inbox (1 GiB) and the signal words with room to spare.
          {"NVSHMEM_SYMMETRIC_SIZE", std::to_string(2ull << 30)}};
}

namespace {

const char* const kRankWords = "; one MPI rank per GPU, rank 0's figure";

std::string heap_words() {
  return "the peer's symmetric heap (nvshmem_malloc memory, reached by NVSHMEM's P2P path: the peer GPU's memory "
         "mapped into this one)";
}

std::string ctas_words(int ctas) { return std::to_string(ctas) + (ctas == 1 ? " CTA" : " CTAs"); }

}  // namespace

Accounting nvshmem_pingpong_accounting(NvshmemPut put, std::size_t bytes, int ctas) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  a.min_sample_s = kNvshmemMinSampleSeconds;
  a.timing = std::string("%globaltimer of rank 0's GPU, read by its persistent kernel at each sample boundary: one "
                         "kernel per GPU runs every round trip of a batch after an untimed handshake, nothing "
                         "launched inside the timed loop; per-op time halved") + kRankWords;
  if (put == NvshmemPut::Thread) {
    a.latency_includes =
        "half a round trip, GPU to GPU through NVSHMEM: one thread puts the message into " + heap_words() +
        " with nvshmem_putmem_signal_nbi (the signal word is set once the data is delivered); the peer's kernel "
        "waits with nvshmem_signal_wait_until and answers the same way; no kernel launch, no host";
    return a;
  }
  a.latency_includes =
      "half a round trip, GPU to GPU through NVSHMEM: " + ctas_words(ctas) + " each put" +
      (ctas == 1 ? " the message" : " a slice of the message") + " into " + heap_words() +
      " with nvshmemx_putmem_signal_nbi_block (each adds 1 to the peer's signal word once its bytes are "
      "delivered); every CTA of the peer waits with nvshmem_signal_wait_until until the word counts the whole "
      "message, then answers the same way; no kernel launch, no host";
  return a;
}

Accounting nvshmem_stream_accounting(std::size_t bytes, int ctas) {
  Accounting a;
  a.bytes_per_op = static_cast<double>(bytes);
  a.min_sample_s = kNvshmemMinSampleSeconds;
  a.timing = "%globaltimer of rank 0's GPU (the sender), read by its persistent kernel at each sample boundary: "
             "back-to-back messages, each CTA putting its slice into " + heap_words() +
             " with nvshmemx_putmem_signal_nbi_block (a signal per slice); the receiver's kernel waits "
             "(nvshmem_signal_wait_until) for every slice of a message and answers with a signal of its own "
             "(nvshmemx_signal_op), and a CTA puts its slice of the next message only after that answer (one "
             "message in flight: the sender never overwrites bytes not yet seen arriving); a sample ends when the "
             "answer to its last message has reached the sender" + std::string(kRankWords);
  a.latency_includes = "one message put by " + ctas_words(ctas) + ", signalled and answered, no launch";
  return a;
}

std::vector<Params> nvshmem_variants(bool pingpong) {
  std::vector<Params> out;
  for (NvshmemPut put : {NvshmemPut::Block, NvshmemPut::Thread}) {
    if (!pingpong && put == NvshmemPut::Thread) continue;  // a stream of large messages: every thread of each CTA
    out.push_back(Params{{"gpus", std::string("0,1")},
                         {"direction", std::string(pingpong ? "half_round_trip" : "uni")},
                         {"launch_mode", std::string("persistent")},
                         {"put", std::string(to_string(put))}});
  }
  return out;
}

Movement nvshmem_movement(bool pingpong, const Params& p) {
  Endpoint from = gpu_memory(gpu_of_rank(p, 0), Allocator::Device);
  Endpoint to = gpu_memory(gpu_of_rank(p, 1), Allocator::NvshmemMalloc);
  from.rank = 0;
  to.rank = 1;
  return movement_between(pingpong ? Operation::PingPong : Operation::SendRecv,
                          pingpong ? MoveDirection::HalfRoundTrip : MoveDirection::Uni, Mechanism::Nvshmem, from, to, p,
                          {"launch_mode", "put"});
}

BenchmarkInfo nvshmem_info(bool pingpong) {
  return BenchmarkInfo{pingpong ? "nvshmem.pingpong" : "nvshmem.bandwidth",
                       Category::PointToPoint,
                       "mpi-gpu",
                       pingpong ? "NVSHMEM ping-pong between ranks 0 and 1 (putmem_signal into the peer's symmetric "
                                  "heap, signal_wait_until), half round trip, persistent kernels"
                                : "NVSHMEM one-way messages rank 0 -> rank 1 (putmem_signal per CTA slice into the "
                                  "peer's symmetric heap, a signal back per message), persistent kernels",
                       pingpong ? Metric::Latency : Metric::Bandwidth,
                       RankRange{2, 0},
                       pingpong ? transfer_sizes(8, 1ull << 20) : transfer_sizes(8, 1ull << 30),
                       pingpong ? std::vector<std::uint64_t>{8, 4096, 1ull << 20}
                                : std::vector<std::uint64_t>{8, 1ull << 20, 256ull << 20},
                       {}};
}

NvshmemBuilt& nvshmem_built() {
  static NvshmemBuilt built;
  return built;
}

namespace {

// Why this engine has no NVSHMEM transport, or "" where it has one.
std::string not_built() {
  if (nvshmem_built().make) return "";
  return *COMMATLAS_NVSHMEM_MISSING ? COMMATLAS_NVSHMEM_MISSING : "its transport is not linked into this program";
}

TransportSpec spec() {
  TransportSpec s{
      Mechanism::Nvshmem, "mpi-gpu",
      [](const Context& ctx) -> std::optional<std::string> {
        if (const std::string missing = not_built(); !missing.empty()) return nvshmem_refuse_job(missing, false, 0, 0, 0);
        return nvshmem_built().unavailable(ctx);
      },
      [](Context& ctx, const Params& params, std::size_t bytes, std::size_t recv_bytes) -> std::unique_ptr<Transport> {
        if (const std::string missing = not_built(); !missing.empty())
          throw Skip(*nvshmem_refuse_job(missing, false, 0, 0, 0));
        return nvshmem_built().make(ctx, params, bytes, recv_bytes);
      },
      {{Protocol::PingPong, nvshmem_info(true)}, {Protocol::Bandwidth, nvshmem_info(false)}}};
  s.variants = [](const Context&, Protocol p) { return nvshmem_variants(p == Protocol::PingPong); };
  s.movement = [](const Context&, const Params& p, Protocol protocol) {
    return nvshmem_movement(protocol == Protocol::PingPong, p);
  };
  return s;
}

const bool registered = register_transport(spec());

}  // namespace
}  // namespace commatlas
