// NVSHMEM as a mechanism, without a GPU: which sizes each put carries, which jobs it refuses and
// why, the environment it sets, what each record says it timed and includes, the registration
// (keys, variants, movements, the reason it cannot run here, in every build), and the job-end
// steps its finalize runs in.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/registry.h"
#include "transport/nvshmem.h"

namespace commatlas {
namespace {

TEST(Nvshmem, PutNamesReadBack) {
  for (NvshmemPut p : {NvshmemPut::Block, NvshmemPut::Thread}) EXPECT_EQ(nvshmem_put_from_string(to_string(p)), p);
  EXPECT_THROW(nvshmem_put_from_string("warp"), UsageError);
}

TEST(Nvshmem, OneThreadPutsOnlySmallMessages) {
  EXPECT_FALSE(nvshmem_refuse_size(NvshmemPut::Thread, 8).has_value());
  EXPECT_FALSE(nvshmem_refuse_size(NvshmemPut::Thread, kNvshmemThreadPutMaxBytes).has_value());
  const auto why = nvshmem_refuse_size(NvshmemPut::Thread, kNvshmemThreadPutMaxBytes + 1);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("64 KiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("put=block"), std::string::npos) << *why;  // says which put carries it
  EXPECT_FALSE(nvshmem_refuse_size(NvshmemPut::Block, std::size_t{1} << 30).has_value());
}

TEST(Nvshmem, RefusesJobsItCannotPairOneGpuPerRankIn) {
  // The build's reason comes first, in CMake's words.
  const auto unbuilt = nvshmem_refuse_job("nvshmem.h not found (set NVSHMEM_HOME)", true, 2, 2, 2);
  ASSERT_TRUE(unbuilt.has_value());
  EXPECT_EQ(*unbuilt, "built without NVSHMEM (nvshmem.h not found (set NVSHMEM_HOME))");
  const auto single = nvshmem_refuse_job("", false, 1, 1, 2);
  ASSERT_TRUE(single.has_value());
  EXPECT_NE(single->find("mpiexec"), std::string::npos) << *single;
  const auto lonely = nvshmem_refuse_job("", true, 1, 1, 8);
  ASSERT_TRUE(lonely.has_value());
  EXPECT_NE(lonely->find("needs 2 ranks"), std::string::npos) << *lonely;
  const auto no_gpu = nvshmem_refuse_job("", true, 2, 2, 0);
  ASSERT_TRUE(no_gpu.has_value());
  EXPECT_NE(no_gpu->find("no GPU"), std::string::npos) << *no_gpu;
  const auto one_gpu = nvshmem_refuse_job("", true, 2, 2, 1);
  ASSERT_TRUE(one_gpu.has_value());
  EXPECT_NE(one_gpu->find("a GPU per rank"), std::string::npos) << *one_gpu;
  const auto crowded = nvshmem_refuse_job("", true, 4, 4, 2);
  ASSERT_TRUE(crowded.has_value());
  EXPECT_NE(crowded->find("more ranks on the node (4) than GPUs (2)"), std::string::npos) << *crowded;
  EXPECT_FALSE(nvshmem_refuse_job("", true, 2, 2, 2).has_value());
  EXPECT_FALSE(nvshmem_refuse_job("", true, 2, 1, 1).has_value());  // a rank per node, one GPU each
  EXPECT_FALSE(nvshmem_refuse_job("", true, 8, 8, 8).has_value());
}

TEST(Nvshmem, KeepsNvlinkMulticastAndRemoteTransportsOff) {
  std::set<std::string> names;
  for (const auto& [name, value] : nvshmem_environment_defaults()) {
    names.insert(name);
    if (name == "NVSHMEM_DISABLE_NVLS") EXPECT_EQ(value, "1");
    if (name == "NVSHMEM_REMOTE_TRANSPORT") EXPECT_EQ(value, "none");
    if (name == "NVSHMEM_DISABLE_NCCL") EXPECT_EQ(value, "1");
    if (name == "NVSHMEM_SYMMETRIC_SIZE") EXPECT_GT(std::stoull(value), std::uint64_t{1} << 30);  // the 1 GiB inbox fits
  }
  EXPECT_EQ(names, (std::set<std::string>{"NVSHMEM_DISABLE_NVLS", "NVSHMEM_REMOTE_TRANSPORT", "NVSHMEM_DISABLE_NCCL",
                                          "NVSHMEM_SYMMETRIC_SIZE"}));
}

TEST(Nvshmem, EachRecordSaysWhatItTimedAndWhatTheFigureIncludes) {
  const Accounting one = nvshmem_pingpong_accounting(NvshmemPut::Block, 8, 1);
  EXPECT_EQ(one.bytes_per_op, 8);
  EXPECT_GE(one.min_sample_s, 100e-6);  // the timer's update interval stays under 1% of a sample
  EXPECT_NE(one.timing.find("%globaltimer"), std::string::npos);
  EXPECT_NE(one.timing.find("nothing launched inside the timed loop"), std::string::npos);
  EXPECT_NE(one.timing.find("halved"), std::string::npos);
  EXPECT_NE(one.latency_includes.find("half a round trip"), std::string::npos);
  EXPECT_NE(one.latency_includes.find("nvshmemx_putmem_signal_nbi_block"), std::string::npos);
  EXPECT_NE(one.latency_includes.find("nvshmem_signal_wait_until"), std::string::npos);
  EXPECT_NE(one.latency_includes.find("1 CTA each put the message"), std::string::npos) << one.latency_includes;
  EXPECT_NE(one.latency_includes.find("no kernel launch"), std::string::npos);
  const Accounting wide = nvshmem_pingpong_accounting(NvshmemPut::Block, 1 << 20, 64);
  EXPECT_NE(wide.latency_includes.find("64 CTAs each put a slice"), std::string::npos) << wide.latency_includes;
  const Accounting thread = nvshmem_pingpong_accounting(NvshmemPut::Thread, 64, 1);
  EXPECT_NE(thread.latency_includes.find("one thread puts"), std::string::npos);
  EXPECT_NE(thread.latency_includes.find("nvshmem_putmem_signal_nbi "), std::string::npos);
  EXPECT_EQ(thread.latency_includes.find("_block"), std::string::npos);
  const Accounting stream = nvshmem_stream_accounting(256 << 20, 132);
  EXPECT_EQ(stream.bytes_per_op, 256 << 20);
  EXPECT_NE(stream.timing.find("one message in flight"), std::string::npos);
  EXPECT_NE(stream.timing.find("nvshmemx_signal_op"), std::string::npos);
  EXPECT_NE(stream.latency_includes.find("132 CTAs"), std::string::npos);
}

TEST(Nvshmem, VariantsDeclareTheirMovementAsTheirOwnMechanism) {
  std::set<std::string> puts;
  for (bool pingpong : {true, false}) {
    for (const Params& p : nvshmem_variants(pingpong)) {
      const Movement m = nvshmem_movement(pingpong, p);
      EXPECT_EQ(m.mechanism, Mechanism::Nvshmem);
      EXPECT_EQ(m.operation, pingpong ? Operation::PingPong : Operation::SendRecv);
      EXPECT_EQ(m.direction, pingpong ? MoveDirection::HalfRoundTrip : MoveDirection::Uni);
      ASSERT_TRUE(m.from && m.to);
      EXPECT_EQ(m.from->memory, Memory::Gpu);
      EXPECT_EQ(m.from->gpu, 0);
      EXPECT_EQ(m.from->rank, 0);
      EXPECT_EQ(m.from->allocator, "device");
      EXPECT_EQ(m.to->gpu, 1);
      EXPECT_EQ(m.to->rank, 1);
      EXPECT_EQ(m.to->allocator, "nvshmem_malloc");  // the peer's inbox is in the symmetric heap
      EXPECT_TRUE(allocator_allowed(m.to->allocator, m.to->memory));
      EXPECT_EQ(m.choices.text("launch_mode"), "persistent");
      ASSERT_TRUE(m.choices.has("put"));
      puts.insert((pingpong ? "pingpong " : "bandwidth ") + m.choices.text("put"));
    }
  }
  EXPECT_EQ(puts, (std::set<std::string>{"pingpong block", "pingpong thread", "bandwidth block"}));
}

TEST(Nvshmem, MechanismAndAllocatorAreInTheVocabulary) {
  bool mechanism = false, allocator = false;
  for (const VocabularyEntry& e : mechanism_vocabulary()) mechanism |= e.name == "nvshmem" && !e.meaning.empty();
  for (const VocabularyEntry& e : allocator_vocabulary()) allocator |= e.name == "nvshmem_malloc" && !e.meaning.empty();
  EXPECT_TRUE(mechanism);
  EXPECT_TRUE(allocator);
  EXPECT_EQ(to_string(Mechanism::Nvshmem), "nvshmem");
}

const Benchmark& find(const std::string& key) {
  const Benchmark* b = Registry::instance().find(key);
  if (!b) throw std::runtime_error(key + " is not registered");
  return *b;
}

// Every build lists both benchmarks; one process is never an NVSHMEM job of a rank per GPU, so
// each says why it cannot run: the build's reason where it has no NVSHMEM, else the job's.
TEST(Nvshmem, RegisteredEverywhereAndSaysWhyItCannotRunHere) {
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const char* key : {"nvshmem.pingpong", "nvshmem.bandwidth"}) {
    const Benchmark& b = find(key);
    const bool latency = std::string(key).find("pingpong") != std::string::npos;
    EXPECT_EQ(b.info().suite, "mpi-gpu") << key;
    EXPECT_EQ(b.info().metric, latency ? Metric::Latency : Metric::Bandwidth) << key;
    EXPECT_EQ(b.info().ranks.min, 2) << key;
    EXPECT_EQ(b.variants(ctx).size(), latency ? 2u : 1u) << key;
    for (const Params& p : b.variants(ctx)) EXPECT_EQ(b.movement(ctx, p).mechanism, Mechanism::Nvshmem) << key;
    const auto why = b.unavailable(ctx);
    ASSERT_TRUE(why.has_value()) << key;
#ifdef COMMATLAS_TEST_NVSHMEM_BUILT
    EXPECT_NE(why->find("mpiexec"), std::string::npos) << *why;
#else
    EXPECT_EQ(why->rfind("built without NVSHMEM (", 0), 0u) << *why;
#endif
  }
}

TEST(Nvshmem, JobEndStepsRunOnceLatestFirst) {
  SingleProcessGroup group;
  std::vector<int> order;
  group.at_end([&] { order.push_back(1); });
  group.at_end([&] { order.push_back(2); });
  group.run_end_steps();
  group.run_end_steps();  // nothing left: a finalize never runs twice
  EXPECT_EQ(order, (std::vector<int>{2, 1}));
}

}  // namespace
}  // namespace commatlas
