// NCCL's device API as a mechanism, without a GPU: the version gate that keeps kernels from running
// with an NCCL they were not compiled for, how messages are shared among CTAs, which sizes NCCL's
// LL protocol carries, what each record says it timed and includes, and (NCCL builds) the
// registration: keys, variants, movements and the reason it cannot run here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.h"
#include "core/registry.h"
#include "fake_gpus.h"
#include "backends/nccl/nccl_release.h"
#include "transport/nccl_device.h"

namespace commatlas {
namespace {


TEST(NcclDevice, KernelsRunOnlyWithAnNcclTheyMayRunWith) {
  // 2.28.9 headers, 2.28.9 loaded: the one combination NCCL 2.28 promises.
  EXPECT_FALSE(nccl_device_code_unusable(22809, 22809).has_value());
  // Before 2.28 there is no device API at all.
  const auto old = nccl_device_code_unusable(22809, 22703);
  ASSERT_TRUE(old.has_value());
  EXPECT_NE(old->find("2.27.3 has no device API (needs 2.28+)"), std::string::npos) << *old;
  // Older than the headers: never.
  const auto older = nccl_device_code_unusable(22809, 22807);
  ASSERT_TRUE(older.has_value());
  EXPECT_NE(older->find("older than"), std::string::npos) << *older;
  // 2.28's structures changed between releases: compiled against 2.28, only the same release runs.
  const auto newer = nccl_device_code_unusable(22809, 22903);
  ASSERT_TRUE(newer.has_value());
  EXPECT_NE(newer->find("2.28.9"), std::string::npos) << *newer;
  EXPECT_NE(newer->find("2.29.3"), std::string::npos) << *newer;
  // From 2.29, LSA device code keeps working with later releases.
  EXPECT_FALSE(nccl_device_code_unusable(22903, 22907).has_value());
  EXPECT_FALSE(nccl_device_code_unusable(22903, 23007).has_value());
  EXPECT_TRUE(nccl_device_code_unusable(22907, 22903).has_value());
}

TEST(NcclDevice, SaysWhichNcclLacksTheDeviceApi) {
  EXPECT_EQ(nccl::release_text(22809), "2.28.9");
  EXPECT_EQ(nccl::release_text(2708), "2.7.8");  // the encoding before 2.9
  EXPECT_EQ(nccl::release_text(23007), "2.30.7");
  const std::string why = nccl_no_device_api(22703);
  EXPECT_NE(why.find("NCCL 2.27.3 has no device API (needs 2.28+)"), std::string::npos) << why;
}

TEST(NcclDevice, MessagesAreSharedAmongCtasThatAreResidentAtOnce) {
  const CtaSlicing tiny = cta_slicing(8, 132);
  EXPECT_EQ(tiny.ctas, 1);
  EXPECT_GE(tiny.slice_bytes, 8u);
  const CtaSlicing mib = cta_slicing(1 << 20, 132);
  EXPECT_EQ(mib.ctas, 64);  // 16 KiB slices
  EXPECT_EQ(mib.slice_bytes, std::size_t{16} << 10);
  EXPECT_EQ(cta_slicing(std::size_t{1} << 30, 132).ctas, 132);  // one CTA per SM at most
  for (std::size_t bytes : {std::size_t{1}, std::size_t{8}, std::size_t{4097}, (std::size_t{16} << 10) + 1,
                            std::size_t{1} << 20, std::size_t{3} << 28, (std::size_t{20000} << 10) + 1,
                            std::size_t{1} << 32}) {
    for (int sms : {1, 78, 132}) {
      const CtaSlicing s = cta_slicing(bytes, sms);
      EXPECT_EQ(s.slice_bytes % 16, 0u) << bytes;  // 16-byte stores stay aligned in every slice
      EXPECT_GE(s.ctas, 1) << bytes;
      EXPECT_LE(s.ctas, sms) << bytes;  // co-resident: the grid barrier never waits for a free SM
      EXPECT_GE(static_cast<std::size_t>(s.ctas) * s.slice_bytes, bytes) << bytes << " over " << sms;
      EXPECT_LT(static_cast<std::size_t>(s.ctas - 1) * s.slice_bytes, bytes) << bytes;  // no CTA without bytes
    }
  }
}

TEST(NcclDevice, TheLlProtocolCarriesOneCtaOfPacks) {
  EXPECT_EQ(kNcclLlMaxBytes, 4096u);
  EXPECT_FALSE(nccl_device_refuse_size(NcclDeviceSignal::Ll, 8).has_value());
  EXPECT_FALSE(nccl_device_refuse_size(NcclDeviceSignal::Ll, 4096).has_value());
  const auto why = nccl_device_refuse_size(NcclDeviceSignal::Ll, 4097);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("lsa_barrier"), std::string::npos) << *why;  // says which signal carries it
  EXPECT_FALSE(nccl_device_refuse_size(NcclDeviceSignal::LsaBarrier, std::size_t{1} << 30).has_value());
}

TEST(NcclDevice, SignalNamesReadBack) {
  for (NcclDeviceSignal s : {NcclDeviceSignal::LsaBarrier, NcclDeviceSignal::Ll}) EXPECT_EQ(nccl_device_signal_from_string(to_string(s)), s);
  EXPECT_THROW(nccl_device_signal_from_string("flag"), UsageError);
}

TEST(NcclDevice, EachRecordSaysWhatItTimedAndWhatTheFigureIncludes) {
  const Accounting barrier = nccl_device_pingpong_accounting(NcclDeviceSignal::LsaBarrier, 8, 1);
  EXPECT_EQ(barrier.bytes_per_op, 8);
  EXPECT_GE(barrier.min_sample_s, 100e-6);  // the timer's update interval stays under 1% of a sample
  EXPECT_NE(barrier.timing.find("%globaltimer"), std::string::npos);
  EXPECT_NE(barrier.timing.find("nothing launched inside the timed loop"), std::string::npos);
  EXPECT_NE(barrier.timing.find("halved"), std::string::npos);
  EXPECT_NE(barrier.latency_includes.find("half a round trip"), std::string::npos);
  EXPECT_NE(barrier.latency_includes.find("ncclLsaBarrierSession::sync"), std::string::npos);
  EXPECT_NE(barrier.latency_includes.find("no kernel launch"), std::string::npos);
  EXPECT_EQ(barrier.latency_includes.find("grid barrier"), std::string::npos);  // one CTA meets nobody
  const Accounting wide = nccl_device_pingpong_accounting(NcclDeviceSignal::LsaBarrier, 1 << 20, 64);
  EXPECT_NE(wide.latency_includes.find("64 CTAs"), std::string::npos) << wide.latency_includes;
  EXPECT_NE(wide.latency_includes.find("grid barrier"), std::string::npos) << wide.latency_includes;
  const Accounting ll = nccl_device_pingpong_accounting(NcclDeviceSignal::Ll, 64, 1);
  EXPECT_NE(ll.latency_includes.find("protocol LL"), std::string::npos);
  EXPECT_NE(ll.latency_includes.find("ncclLLA2ASession"), std::string::npos);
  EXPECT_EQ(ll.latency_includes.find("LSA barrier"), std::string::npos);
  const Accounting stream = nccl_device_stream_accounting(256 << 20, 132);
  EXPECT_EQ(stream.bytes_per_op, 256 << 20);
  EXPECT_NE(stream.timing.find("once per message"), std::string::npos);
  EXPECT_NE(stream.latency_includes.find("132 CTAs"), std::string::npos);
}

TEST(NcclDevice, VariantsDeclareTheirMovementAsTheirOwnMechanism) {
  std::set<std::string> signals;
  for (bool pingpong : {true, false}) {
    for (const Params& p : nccl_device_variants(pingpong)) {
      const Movement m = nccl_device_movement(pingpong, p);
      EXPECT_EQ(m.mechanism, Mechanism::NcclDevice);
      EXPECT_EQ(m.operation, pingpong ? Operation::PingPong : Operation::SendRecv);
      EXPECT_EQ(m.direction, pingpong ? MoveDirection::HalfRoundTrip : MoveDirection::Uni);
      ASSERT_TRUE(m.from && m.to);
      EXPECT_EQ(m.from->memory, Memory::Gpu);
      EXPECT_EQ(m.from->gpu, 0);
      EXPECT_EQ(m.from->rank, 0);
      EXPECT_EQ(m.from->allocator, "device");
      EXPECT_EQ(m.to->gpu, 1);
      EXPECT_EQ(m.to->rank, 1);
      EXPECT_EQ(m.to->allocator, "nccl_mem");  // the peer's window is ncclMemAlloc memory, not cudaMalloc
      EXPECT_TRUE(allocator_allowed(m.to->allocator, m.to->memory));
      EXPECT_EQ(m.choices.text("launch_mode"), "persistent");
      ASSERT_TRUE(m.choices.has("signal"));
      signals.insert((pingpong ? "pingpong " : "bandwidth ") + m.choices.text("signal"));
    }
  }
  EXPECT_EQ(signals, (std::set<std::string>{"pingpong lsa_barrier", "pingpong ll", "bandwidth lsa_barrier"}));
}

TEST(NcclDevice, MechanismAndAllocatorAreInTheVocabulary) {
  bool mechanism = false, allocator = false;
  for (const VocabularyEntry& e : mechanism_vocabulary()) mechanism |= e.name == "nccl_device" && !e.meaning.empty();
  for (const VocabularyEntry& e : allocator_vocabulary()) allocator |= e.name == "nccl_mem" && !e.meaning.empty();
  EXPECT_TRUE(mechanism);
  EXPECT_TRUE(allocator);
  EXPECT_EQ(to_string(Mechanism::NcclDevice), "nccl_device");
}

#if defined(COMMATLAS_HAVE_NCCL)
const Benchmark& find(const std::string& key) {
  const Benchmark* b = Registry::instance().find(key);
  if (!b) throw std::runtime_error(key + " is not registered");
  return *b;
}

TEST(NcclDevice, RegisteredInTheRankPerGpuSuite) {
  const testing::FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const char* key : {"nccl_device.pingpong", "nccl_device.bandwidth"}) {
    const Benchmark& b = find(key);
    const bool latency = std::string(key).find("pingpong") != std::string::npos;
    EXPECT_EQ(b.info().suite, "mpi-gpu") << key;
    EXPECT_EQ(b.info().metric, latency ? Metric::Latency : Metric::Bandwidth) << key;
    EXPECT_EQ(b.info().ranks.min, 2) << key;
    EXPECT_EQ(b.variants(ctx).size(), latency ? 2u : 1u) << key;
    for (const Params& p : b.variants(ctx)) EXPECT_EQ(b.movement(ctx, p).mechanism, Mechanism::NcclDevice) << key;
  }
}

TEST(NcclDevice, SaysWhyItCannotRunHere) {
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  {
    const testing::FakeGpus none(0);
    const auto why = find("nccl_device.pingpong").unavailable(ctx);
    ASSERT_TRUE(why.has_value());
    EXPECT_FALSE(why->empty());
  }
  // GPUs, but one process: a rank per GPU needs an MPI job (or the build's reason it has no
  // device API, which comes first).
  const testing::FakeGpus two(2);
  const auto why = find("nccl_device.bandwidth").unavailable(ctx);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->find("MPI") != std::string::npos || why->find("device API") != std::string::npos) << *why;
}
#endif

}  // namespace
}  // namespace commatlas
