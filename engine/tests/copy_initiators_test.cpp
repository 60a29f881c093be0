// Copy initiators are strategies: every registered one is measured by every copy benchmark that
// applies to it, and a new one gets them all from its class and its registration line alone.
// (GPU builds only: the initiators live in backends/cuda. No GPU is needed: nothing is run.)
#include <gtest/gtest.h>

#ifdef COMMATLAS_HAVE_GPU

#include <set>

#include "copy/copy_initiator.h"
#include "benchmarks/explicit_copy/copy_family.h"
#include "core/registry.h"
#include "fake_gpus.h"

namespace commatlas::cuda {
namespace {

// An initiator that exists only here: its own params and choice, a latency benchmark and two
// settings, and no runtime (the test never prepares a workload).
class FakeInitiator final : public CopyInitiator {
 public:
  FakeInitiator()
      : CopyInitiator({"fake", Mechanism::SmCopy, "a fake copier", "fake_copy()",
                       "gpu.copy_fake_latency"}) {}
  void add_params(Params& p) const override { p.set("knob", std::int64_t{1}); }
  std::vector<std::string> choices() const override { return {"knob"}; }
  std::vector<Params> settings() const override {
    return {Params{{"knob", std::int64_t{1}}}, Params{{"knob", std::int64_t{2}}}};
  }
  std::string settings_words() const override { return "fake knob settings"; }
  std::unique_ptr<DeviceCopier> device_copier(int, const Params&) const override { return nullptr; }
  std::unique_ptr<LegCopier> prepare(const Params&, const Leg&, PlacedBuffer&, PlacedBuffer&) const override {
    return nullptr;
  }
};

using testing::FakeGpus;

std::set<std::string> keys_of(const std::vector<std::unique_ptr<Benchmark>>& benchmarks) {
  std::set<std::string> keys;
  for (const auto& b : benchmarks) keys.insert(b->info().key);
  return keys;
}

TEST(CopyInitiators, CopyEnginesAndSmKernelAreRegistered) {
  std::set<std::string> names;
  for (const InitiatorPtr& i : CopyInitiators::instance().all()) names.insert(i->name());
  EXPECT_EQ(names, (std::set<std::string>{"ce", "sm"}));
  EXPECT_EQ(CopyInitiators::instance().find("ce")->mechanism(), Mechanism::CopyEngine);
  EXPECT_EQ(CopyInitiators::instance().find("sm")->mechanism(), Mechanism::SmCopy);
  EXPECT_EQ(CopyInitiators::instance().find("nvlink_magic"), nullptr);
}

TEST(CopyInitiators, EveryRegisteredInitiatorIsInEveryFamilyThatApplies) {
  for (const InitiatorPtr& i : CopyInitiators::instance().all()) {
    const auto benchmarks = copy_benchmarks_for(i);
    for (const auto& b : benchmarks) {
      const Benchmark* registered = Registry::instance().find(b->info().key);
      ASSERT_NE(registered, nullptr) << b->info().key << " was made for " << i->name() << " but is not registered";
      EXPECT_EQ(registered->info().description, b->info().description);
    }
  }
  const auto ce = keys_of(copy_benchmarks_for(CopyInitiators::instance().find("ce")));
  EXPECT_EQ(ce, (std::set<std::string>{"gpu.copy_ce", "gpu.copy_ce_matrix", "gpu.copy_ce_fanout", "gpu.copy_latency"}));
  const auto sm = keys_of(copy_benchmarks_for(CopyInitiators::instance().find("sm")));
  EXPECT_EQ(sm, (std::set<std::string>{"gpu.copy_sm", "gpu.copy_sm_matrix", "gpu.copy_sm_fanout", "gpu.copy_sm_shapes"}));
}

TEST(CopyInitiators, ANewInitiatorGetsEveryFamilyWithItsParamsAndChoices) {
  const InitiatorPtr fake = std::make_shared<FakeInitiator>();
  const auto benchmarks = copy_benchmarks_for(fake);
  EXPECT_EQ(keys_of(benchmarks), (std::set<std::string>{"gpu.copy_fake", "gpu.copy_fake_matrix", "gpu.copy_fake_fanout",
                                                         "gpu.copy_fake_latency", "gpu.copy_fake_shapes"}));
  FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const auto& b : benchmarks) {
    const BenchmarkInfo info = b->info();
    EXPECT_EQ(b->movement(ctx, Params{}).mechanism, Mechanism::SmCopy) << info.key;
    if (info.key == "gpu.copy_fake_latency") {
      EXPECT_NE(info.description.find("fake_copy()"), std::string::npos);
    }
    if (info.key == "gpu.copy_fake_shapes") {
      EXPECT_EQ(info.description.rfind("fake knob settings", 0), 0u);
    }
#ifdef COMMATLAS_HAVE_CUDA
    std::set<std::int64_t> knobs;
    const auto variants = b->variants(ctx);
    ASSERT_FALSE(variants.empty()) << info.key;
    for (const Params& p : variants) {
      ASSERT_TRUE(p.has("knob")) << info.key << ": " << p.describe();
      knobs.insert(p.integer("knob"));
      EXPECT_TRUE(b->movement(ctx, p).choices.has("knob")) << info.key << ": " << p.describe();
    }
    EXPECT_EQ(knobs.size(), info.key == "gpu.copy_fake_shapes" ? 2u : 1u) << info.key;
#endif
  }
}

TEST(CopyInitiators, CopyEnginesAddNoParamsAndSmKernelsTheirShape) {
  const InitiatorPtr ce = CopyInitiators::instance().find("ce");
  const InitiatorPtr sm = CopyInitiators::instance().find("sm");
  EXPECT_EQ(copy_params(CopySpec{}, *ce).describe(), to_params(CopySpec{}).describe());
  const Params p = copy_params(CopySpec{}, *sm);
  EXPECT_EQ(shape_from(p), KernelShape{});
  EXPECT_EQ(p.integer("threads_per_block"), KernelShape::kThreadsPerBlock);
  EXPECT_TRUE(ce->settings().empty());
  std::set<std::string> shapes;
  for (const Params& s : sm->settings()) {
    EXPECT_FALSE(shape_problem(shape_from(s)).has_value()) << s.describe();
    shapes.insert(s.describe());
  }
  EXPECT_EQ(shapes.size(), 16u);  // vector 4/16 x unroll 1/4 x 1, 2, 4, 8 blocks per SM
}

TEST(CopyInitiators, OnlyTheCopyEnginesHoldTheHostOnPageableAndHostPreferredMemory) {
  const InitiatorPtr ce = CopyInitiators::instance().find("ce");
  const InitiatorPtr sm = CopyInitiators::instance().find("sm");
  const BufferSpec pageable{Allocator::Pageable, 0, "cpu", ""}, pinned{Allocator::Pinned, 0, "cpu", ""};
  const BufferSpec host_preferred{Allocator::Managed, 0, "cpu", kHostPreferred},
      managed_gpu{Allocator::Managed, 0, "gpu", ""};
  EXPECT_TRUE(ce->holds_host(pageable));
  EXPECT_TRUE(ce->holds_host(host_preferred));
  EXPECT_FALSE(ce->holds_host(pinned));
  EXPECT_FALSE(ce->holds_host(managed_gpu));
  for (const BufferSpec& e : {pageable, pinned, host_preferred, managed_gpu}) EXPECT_FALSE(sm->holds_host(e));
}

#ifdef COMMATLAS_HAVE_CUDA
TEST(CopyInitiators, ShapeSweepCoversEveryShapeLocallyAndOnThePeerFromBothSides) {
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const Benchmark* shapes = Registry::instance().find("gpu.copy_sm_shapes");
  ASSERT_NE(shapes, nullptr);
  {
    FakeGpus gpus(1);
    EXPECT_EQ(shapes->variants(ctx).size(), 16u);  // local only
  }
  FakeGpus gpus(2);
  const auto two = shapes->variants(ctx);
  EXPECT_EQ(two.size(), 48u);  // local + peer written remotely + peer read remotely
  for (const Params& p : two) EXPECT_FALSE(shape_problem(shape_from(p)).has_value());
}
#endif

}  // namespace
}  // namespace commatlas::cuda

#endif  // COMMATLAS_HAVE_GPU
