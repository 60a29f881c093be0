// The GPU-initiated mechanism and the launch-mode benchmarks without a GPU: registration, the
// movement each variant declares, how messages are cut into flagged chunks, what each launch mode's
// figure says it includes, and the reason given where the machine lacks GPUs.
#include <gtest/gtest.h>

#include <set>

#include "core/registry.h"

#if defined(COMMATLAS_HAVE_CUDA) && !defined(COMMATLAS_HIP)
#include "backends/cuda/memory.h"
#include "transport/gpu_initiated.h"

namespace commatlas {
namespace {

class FakeGpus {
 public:
  explicit FakeGpus(int n) { cuda::override_gpu_count_for_tests(n); }
  ~FakeGpus() { cuda::override_gpu_count_for_tests(std::nullopt); }
};

const Benchmark& find(const std::string& key) {
  const Benchmark* b = Registry::instance().find(key);
  if (!b) throw std::runtime_error(key + " is not registered");
  return *b;
}

TEST(GpuInitiated, RegisteredAsItsOwnMechanismInBothMappings) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const char* key : {"gpu_initiated.pingpong", "gpu_initiated.bandwidth", "gpu_initiated.ipc.pingpong",
                          "gpu_initiated.ipc.bandwidth"}) {
    const Benchmark& b = find(key);
    const bool latency = std::string(key).find("pingpong") != std::string::npos;
    EXPECT_EQ(b.info().metric, latency ? Metric::Latency : Metric::Bandwidth) << key;
    EXPECT_EQ(b.info().suite, std::string(key).find(".ipc.") != std::string::npos ? "mpi-gpu" : "gpu") << key;
    std::set<std::string> modes;
    for (const Params& p : b.variants(ctx)) {
      const Movement m = b.movement(ctx, p);
      EXPECT_EQ(m.mechanism, Mechanism::GpuInitiated) << key;
      EXPECT_EQ(to_string(m.mechanism), "gpu_initiated");
      EXPECT_EQ(m.operation, latency ? Operation::PingPong : Operation::SendRecv) << key;
      EXPECT_EQ(m.direction, latency ? MoveDirection::HalfRoundTrip : MoveDirection::Uni) << key;
      ASSERT_TRUE(m.from && m.to);
      EXPECT_EQ(m.from->memory, Memory::Gpu);
      EXPECT_EQ(m.from->gpu, 0);
      EXPECT_EQ(m.to->gpu, 1);
      EXPECT_TRUE(m.choices.has("launch_mode")) << key;
      EXPECT_TRUE(m.choices.has("mapping")) << key;
      modes.insert(p.text("launch_mode"));
    }
    // Ping-pong: every launch mode side by side; bandwidth: the persistent kernel only.
    const std::set<std::string> want =
        latency ? std::set<std::string>{"persistent", "back_to_back", "graph", "launch_included"} : std::set<std::string>{"persistent"};
    EXPECT_EQ(modes, want) << key;
  }
}

TEST(GpuInitiated, MechanismIsInTheVocabulary) {
  bool found = false;
  for (const VocabularyEntry& e : mechanism_vocabulary()) found |= e.name == "gpu_initiated" && !e.meaning.empty();
  EXPECT_TRUE(found);
}

TEST(GpuInitiated, SaysWhyItCannotRunWithoutTwoGpus) {
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  {
    const FakeGpus none(0);
    const auto why = find("gpu_initiated.pingpong").unavailable(ctx);
    ASSERT_TRUE(why.has_value());
    EXPECT_FALSE(why->empty());
  }
  {
    const FakeGpus one(1);
    const auto why = find("gpu_initiated.bandwidth").unavailable(ctx);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("2"), std::string::npos) << *why;
  }
  // Across processes it needs an MPI job, whatever the GPUs.
  const FakeGpus two(2);
  const auto why = find("gpu_initiated.ipc.pingpong").unavailable(ctx);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("MPI"), std::string::npos) << *why;
}

TEST(GpuInitiated, MessagesAreCutIntoFlaggedChunksTheKernelsCanHold) {
  const Chunking tiny = chunking(8, 132);
  EXPECT_EQ(tiny.chunks, 1);
  EXPECT_EQ(tiny.blocks, 1);
  EXPECT_GE(tiny.chunk_bytes, 8u);
  const Chunking mib = chunking(1 << 20, 132);
  EXPECT_EQ(mib.chunks, 64);  // 16 KiB chunks
  EXPECT_EQ(mib.blocks, 64);
  for (std::size_t bytes : {std::size_t{8}, std::size_t{4097}, std::size_t{1} << 20, std::size_t{3} << 28,
                            (std::size_t{20000} << 10) + 1, std::size_t{1} << 32}) {
    const Chunking c = chunking(bytes, 132);
    EXPECT_EQ(c.chunk_bytes % 16, 0u) << bytes;  // 16-byte streaming stores stay aligned
    EXPECT_LE(c.chunks, kMaxChunks) << bytes;  // one flag per chunk
    EXPECT_GE(static_cast<std::size_t>(c.chunks) * c.chunk_bytes, bytes) << bytes;
    EXPECT_LT(static_cast<std::size_t>(c.chunks - 1) * c.chunk_bytes, bytes) << bytes;  // no empty chunk
    EXPECT_LE(c.blocks, 132) << bytes;  // every block resident at once: spinning blocks never wait for a slot
  }
}

TEST(GpuInitiated, EachLaunchModeSaysHowItWasTimedAndWhatItIncludes) {
  for (LaunchMode m : kLaunchModes) {
    EXPECT_EQ(launch_mode_from_string(to_string(m)), m);
    const Accounting a = pingpong_accounting(m, 8, "peer access");
    EXPECT_EQ(a.bytes_per_op, 8);
    EXPECT_NE(a.latency_includes.find("half a round trip"), std::string::npos);
    EXPECT_NE(a.latency_includes.find("peer access"), std::string::npos);
    EXPECT_EQ(a.one_op_per_sample, m == LaunchMode::LaunchIncluded) << to_string(m);
  }
  const Accounting persistent = pingpong_accounting(LaunchMode::Persistent, 8, "CUDA IPC mapping");
  EXPECT_NE(persistent.timing.find("%globaltimer"), std::string::npos);
  EXPECT_NE(persistent.latency_includes.find("no kernel launch"), std::string::npos);
  EXPECT_GE(persistent.min_sample_s, 100e-6);  // the timer's update interval stays under 1% of a sample
  EXPECT_NE(pingpong_accounting(LaunchMode::Graph, 8, "x").timing.find("CUDA graph"), std::string::npos);
  EXPECT_NE(pingpong_accounting(LaunchMode::LaunchIncluded, 8, "x").timing.find("host steady_clock"),
            std::string::npos);
  const Accounting bw = stream_accounting(1 << 20, "peer access");
  EXPECT_NE(bw.timing.find("acknowledgement"), std::string::npos);
  EXPECT_THROW(launch_mode_from_string("eager"), UsageError);
}

TEST(GpuInitiated, SmallMessagesGoByTheFlagInWordProtocolAndTheRecordSaysSo) {
  // Without COMMATLAS_GI_LL_MAX the threshold is the protocol's whole area of the control words.
  ASSERT_EQ(ll_max_bytes(), kLlMaxBytes);
  EXPECT_EQ(kLlMaxBytes, 4u * kLlWords);  // 4 payload bytes per 8-byte word
  EXPECT_EQ(static_cast<int>(kWords), static_cast<int>(kLl) + kLlWords);
  EXPECT_EQ(chunking(kLlMaxBytes, 132).blocks, 1);  // one block carries every LL message
  for (std::size_t bytes : {std::size_t{1}, std::size_t{8}, std::size_t{4095}, kLlMaxBytes}) {
    EXPECT_TRUE(uses_ll(bytes)) << bytes;
    const Accounting a = pingpong_accounting(LaunchMode::Persistent, bytes, "peer access");
    EXPECT_NE(a.latency_includes.find("protocol LL"), std::string::npos) << bytes;
    EXPECT_EQ(a.latency_includes.find("release"), std::string::npos) << bytes;  // no fence
  }
  for (std::size_t bytes : {kLlMaxBytes + 1, std::size_t{1} << 20}) {
    EXPECT_FALSE(uses_ll(bytes)) << bytes;
    const Accounting a = pingpong_accounting(LaunchMode::Graph, bytes, "CUDA IPC mapping");
    EXPECT_NE(a.latency_includes.find("protocol payload-then-flag"), std::string::npos) << bytes;
    EXPECT_NE(a.latency_includes.find("acquire loads"), std::string::npos) << bytes;  // the default poll
  }
}

TEST(LaunchModes, CopiesAndNcclOfferTheSameThreeModes) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  std::vector<std::string> keys = {"gpu.copy_launch"};
#ifdef COMMATLAS_HAVE_NCCL
  keys.push_back("nccl.single.pingpong_launch");
  keys.push_back("nccl.pingpong_launch");
#endif
  for (const std::string& key : keys) {
    const Benchmark& b = find(key);
    EXPECT_EQ(b.info().metric, Metric::Latency) << key;
    std::set<std::string> modes;
    for (const Params& p : b.variants(ctx)) {
      modes.insert(p.text("launch_mode"));
      EXPECT_TRUE(b.movement(ctx, p).choices.has("launch_mode")) << key;
    }
    EXPECT_EQ(modes, (std::set<std::string>{"launch_included", "back_to_back", "graph"})) << key;
  }
  std::set<Mechanism> copies;
  for (const Params& p : find("gpu.copy_launch").variants(ctx)) copies.insert(find("gpu.copy_launch").movement(ctx, p).mechanism);
  EXPECT_EQ(copies, (std::set<Mechanism>{Mechanism::CopyEngine, Mechanism::SmCopy}));
}

}  // namespace
}  // namespace commatlas

#else
TEST(GpuInitiated, NotBuiltWithoutCuda) { GTEST_SKIP() << "the GPU-initiated mechanism is built for CUDA only"; }
#endif
