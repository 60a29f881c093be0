// The contract of the movement model: every benchmark declares a movement for every
// variant it lists, and every parameter of a variant is either consumed into the movement's
// places, operation, direction or mechanism (core/movement.h's consumed_params table) or recorded
// as a choice. GPU benchmarks list their variants as on a 4-GPU node (gpu_count overridden).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "core/error.h"
#include "core/json.h"
#include "core/records.h"
#include "core/registry.h"

#ifdef COMMATLAS_HAVE_CUDA
#include "backends/cuda/placement.h"
#endif

#include "fake_gpus.h"

namespace commatlas {
namespace {

using testing::FakeGpus;

// Operations over a communicator (the vocabulary's participants "all"): their movement says how
// many take part.
bool over_a_communicator(Operation op) { return participants_of(kind_of(op)) == "all"; }

std::set<std::string> consumed_keys() {
  std::set<std::string> keys;
  for (const ConsumedParam& c : consumed_params()) keys.insert(c.key);
  return keys;
}

[[maybe_unused]] std::string movement_json(const Movement& m) {
  JsonWriter w;
  write_movement(w, m);
  return w.str();
}

TEST(MovementContract, EveryVariantDeclaresAMovementAndEveryParamIsClassified) {
  const FakeGpus gpus(4);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const std::set<std::string> consumed = consumed_keys();
  int variants = 0;
  for (const Benchmark* b : Registry::instance().all()) {
    const std::string key = b->info().key;
    // Benchmark-wide records: the operation, direction and mechanism without any variant.
    EXPECT_NO_THROW(b->movement(ctx, Params{})) << key;
    for (const Params& p : b->variants(ctx)) {
      ++variants;
      Movement m;
      ASSERT_NO_THROW(m = b->movement(ctx, p)) << key << " " << p.describe();
      EXPECT_TRUE(m.from && m.to) << key << " " << p.describe() << ": a variant must name both places";
      if (over_a_communicator(m.operation))
        EXPECT_TRUE(m.participants && *m.participants >= 1) << key << ": a collective says how many take part";
      else
        EXPECT_FALSE(m.participants) << key << ": only collectives and patterns have participants";
      if (m.by) {
        EXPECT_TRUE(m.by->processor) << key << ": `by` is a processor, not a place";
      }
      for (const std::optional<Endpoint>* e : {&m.from, &m.to})
        if (*e && !(*e)->allocator.empty())
          EXPECT_TRUE(allocator_allowed((*e)->allocator, (*e)->memory))
              << key << " " << p.describe() << ": allocator '" << (*e)->allocator << "' of " << to_string((*e)->memory)
              << " memory is not in the vocabulary (core/movement.h)";
      EXPECT_TRUE(direction_allowed(m.operation, m.direction))
          << key << " " << p.describe() << ": " << to_string(m.operation) << " has no direction " << to_string(m.direction)
          << " in the vocabulary (core/movement.h)";
      for (const auto& [k, v] : p.entries())
        EXPECT_TRUE(consumed.count(k) || m.choices.has(k))
            << key << " " << p.describe() << ": param '" << k
            << "' is neither consumed into the movement (consumed_params) nor one of its choices";
      for (const auto& [k, v] : m.choices.entries())
        EXPECT_FALSE(consumed.count(k) && !p.has(k)) << key << ": choice '" << k << "' is a place, not a choice";
      if (key.rfind("reference.", 0) == 0 && key != "reference.harness_overhead") {
        EXPECT_FALSE(m.reference_of.empty()) << key << ": a reference loop names the benchmark it checks";
        if (!m.reference_of.empty()) {
          EXPECT_NE(Registry::instance().find(m.reference_of), nullptr) << m.reference_of;
        }
      }
    }
  }
  EXPECT_GT(variants, 0);
}

TEST(MovementContract, ConsumedKeysAreListedOnce) {
  std::set<std::string> seen;
  for (const ConsumedParam& c : consumed_params()) EXPECT_TRUE(seen.insert(c.key).second) << c.key;
}

TEST(MovementContract, HostMemcpyIsACpuCopyBetweenHostBuffers) {
  const Benchmark* b = Registry::instance().find("host.memcpy");
  ASSERT_NE(b, nullptr);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const Movement m = b->movement(ctx, b->variants(ctx).front());
  EXPECT_EQ(m.operation, Operation::Copy);
  EXPECT_EQ(m.mechanism, Mechanism::CpuMemcpy);
  EXPECT_EQ(m.from->memory, Memory::Host);
  EXPECT_TRUE(m.choices.has("threads"));
}

// The allocator table is the one source of allocator words: each parses back to itself, its
// memory is the table's, and a word it does not have is a usage error naming those it has.
TEST(MovementContract, AllocatorWordsComeFromTheTable) {
  const std::vector<VocabularyEntry> table = allocator_vocabulary();
  ASSERT_FALSE(table.empty());
  for (const VocabularyEntry& e : table) {
    const std::optional<Allocator> a = allocator_named(e.name);
    ASSERT_TRUE(a) << e.name;
    EXPECT_EQ(to_string(*a), e.name);
    EXPECT_EQ(parse_allocator(e.name), *a);
    const std::string memory = e.attributes.at(0).second;
    EXPECT_EQ(memory_of(*a) ? to_string(*memory_of(*a)) : "either", memory) << e.name;
    EXPECT_EQ(host_memory(std::nullopt, *a).allocator, e.name);
    EXPECT_EQ(gpu_memory(0, *a).allocator, e.name);
  }
  EXPECT_FALSE(allocator_named("cudaMalloc"));
  try {
    parse_allocator("hbm");
    ADD_FAILURE() << "an allocator the table lacks was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("device_pool"), std::string::npos) << e.what();
  }
}

#ifdef COMMATLAS_HAVE_CUDA
// The GPU runtime's buffer kinds have no words of their own: each is one of the table's
// allocators, and back; the one the runtime does not make (malloc) is refused.
TEST(MovementContract, MemoryKindsAreTableAllocators) {
  for (cuda::MemoryKind k : {cuda::MemoryKind::Device, cuda::MemoryKind::DevicePool, cuda::MemoryKind::Pinned,
                             cuda::MemoryKind::Registered, cuda::MemoryKind::Pageable, cuda::MemoryKind::Managed}) {
    EXPECT_EQ(cuda::memory_kind_of(cuda::allocator_of(k)), k);
    EXPECT_EQ(cuda::memory_kind_from_string(to_string(k)), k);
    EXPECT_EQ(cuda::is_host_memory(k), memory_of(cuda::allocator_of(k)) == Memory::Host) << to_string(k);
  }
  EXPECT_THROW(cuda::memory_kind_of(Allocator::Malloc), UsageError);
  EXPECT_THROW(cuda::memory_kind_from_string("hbm"), UsageError);
}

// A direct-access location is its params (allocator, managed hint, which GPU's memory), and back.
TEST(MovementContract, LocationsRoundTripThroughTheirParams) {
  for (int gpu : {0, 1})
    for (cuda::Location l : cuda::locations(2, true)) {
      const Params p = cuda::location_params(l, gpu);
      EXPECT_EQ(cuda::location_from(p), l) << p.describe();
      EXPECT_TRUE(allocator_named(p.text("allocator"))) << p.describe();
    }
  Params bad = cuda::location_params(cuda::Location::Managed, 0);
  bad.set("managed_hint", std::string("sideways"));
  EXPECT_THROW(cuda::location_from(bad), UsageError);
}

// Whether `p` has `key` with the value `want` spells (a text, or an integer's digits).
bool has_value(const Params& p, const std::string& key, const std::string& want) {
  for (const auto& [k, v] : p.entries())
    if (k == key) {
      if (const auto* text = std::get_if<std::string>(&v)) return *text == want;
      if (const auto* number = std::get_if<std::int64_t>(&v)) return std::to_string(*number) == want;
      return false;
    }
  return false;
}

const Params* find_variant(const std::vector<Params>& all, const std::vector<std::pair<std::string, std::string>>& want) {
  for (const Params& p : all) {
    bool ok = true;
    for (const auto& [k, v] : want) ok = ok && has_value(p, k, v);
    if (ok) return &p;
  }
  return nullptr;
}

// A GPU-touched managed "h2d" copy is a copy within GPU memory: named h2d, it was once compared
// with the PCIe peak and read as 101% of it.
TEST(MovementContract, GpuCopiesNameWhereTheBytesAre) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const Benchmark* b = Registry::instance().find("gpu.copy_ce");
  ASSERT_NE(b, nullptr);
  const auto variants = b->variants(ctx);

  const Params* pinned = find_variant(variants, {{"path", "h2d"}, {"host_allocator", "pinned"}, {"device_allocator", "device"}});
  ASSERT_NE(pinned, nullptr);
  const Movement h2d = b->movement(ctx, *pinned);
  std::cout << "gpu.copy_ce " << pinned->describe() << "\n  movement: " << movement_json(h2d) << "\n";
  EXPECT_EQ(h2d.from->memory, Memory::Host);
  EXPECT_EQ(h2d.from->allocator, "pinned");
  EXPECT_EQ(h2d.to->memory, Memory::Gpu);
  EXPECT_EQ(h2d.to->gpu, 0);
  EXPECT_EQ(h2d.mechanism, Mechanism::CopyEngine);
  EXPECT_EQ(h2d.choices.text("engine_side"), "dst");

  const Params* managed = find_variant(variants, {{"path", "h2d"}, {"host_allocator", "managed"}, {"first_touch", "gpu"}});
  ASSERT_NE(managed, nullptr);
  const Movement inside = b->movement(ctx, *managed);
  EXPECT_EQ(inside.from->memory, Memory::Gpu) << movement_json(inside);
  EXPECT_EQ(inside.from->allocator, "managed");
  EXPECT_EQ(inside.to->memory, Memory::Gpu);

  const Params* host_preferred = find_variant(variants, {{"path", "h2d"}, {"host_allocator", "managed"}, {"first_touch", "cpu"}});
  ASSERT_NE(host_preferred, nullptr);
  EXPECT_EQ(b->movement(ctx, *host_preferred).from->memory, Memory::Host);
}

// A STREAM copy by GPU 0 of arrays in GPU 1's memory is not a copy "within GPU 1": the GPU whose
// SMs copy is declared (`by`), not left to a choice named `gpu`.
TEST(MovementContract, StreamCopyNamesTheGpuThatCopies) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const Benchmark* b = Registry::instance().find("gpu.stream_copy");
  ASSERT_NE(b, nullptr);
  const auto variants = b->variants(ctx);
  const Params* peer = find_variant(variants, {{"allocator", "device"}, {"memory_gpu", "1"}});
  ASSERT_NE(peer, nullptr);
  const Movement m = b->movement(ctx, *peer);
  std::cout << "gpu.stream_copy " << peer->describe() << "\n  movement: " << movement_json(m) << "\n";
  EXPECT_EQ(m.from->gpu, 1);
  EXPECT_EQ(m.to->gpu, 1);
  ASSERT_TRUE(m.by);
  EXPECT_TRUE(m.by->processor);
  EXPECT_EQ(m.by->memory, Memory::Gpu);
  EXPECT_EQ(m.by->gpu, 0);
  EXPECT_FALSE(m.choices.has("gpu"));
  const Params* local = find_variant(variants, {{"allocator", "device"}, {"memory_gpu", "0"}});
  ASSERT_NE(local, nullptr);
  const Movement here = b->movement(ctx, *local);
  EXPECT_EQ(here.from->gpu, 0);
  ASSERT_TRUE(here.by);
  EXPECT_EQ(here.by->gpu, 0);
}

// Copies between two GPUs are run by one of them (engine_side, a choice): no `by`.
TEST(MovementContract, PeerCopiesLeaveTheEngineSideAChoice) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const char* key : {"gpu.copy_ce", "gpu.copy_sm"}) {
    const Benchmark* b = Registry::instance().find(key);
    ASSERT_NE(b, nullptr) << key;
    const auto variants = b->variants(ctx);
    for (const char* side : {"src", "dst"}) {
      const Params* p = find_variant(variants, {{"path", "peer"}, {"engine_side", side}});
      ASSERT_NE(p, nullptr) << key << " " << side;
      const Movement m = b->movement(ctx, *p);
      EXPECT_EQ(m.from->gpu, 0) << key;
      EXPECT_EQ(m.to->gpu, 1) << key;
      EXPECT_FALSE(m.by) << key;
      EXPECT_EQ(m.choices.text("engine_side"), side) << key;
    }
  }
}

// The same collective over the same GPUs keys alike however it is launched: the movement says
// how many take part (one process driving 4 GPUs: 4), not how many processes the run has.
TEST(MovementContract, CollectivesSayHowManyTakePart) {
  if (!Registry::instance().find("nccl.single.allreduce")) GTEST_SKIP() << "built without NCCL";
  const FakeGpus gpus(4);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  int seen = 0;
  for (const Benchmark* b : Registry::instance().all()) {
    const std::string key = b->info().key;
    if (key.rfind("nccl.single.", 0) != 0) continue;
    for (const Params& p : b->variants(ctx)) {
      const Movement m = b->movement(ctx, p);
      if (!over_a_communicator(m.operation)) {
        EXPECT_FALSE(m.participants) << key;  // send/recv between two GPUs: no communicator size in the key
        continue;
      }
      ++seen;
      ASSERT_TRUE(m.participants) << key;
      EXPECT_EQ(*m.participants, 4) << key << " " << p.describe();
    }
  }
  EXPECT_EQ(seen, 6);
}

TEST(MovementContract, StreamReadHasTheGpuAsItsProcessor) {
  const FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  const Benchmark* b = Registry::instance().find("gpu.stream_read");
  ASSERT_NE(b, nullptr);
  const auto variants = b->variants(ctx);
  const Params* managed = find_variant(variants, {{"allocator", "managed"}, {"managed_hint", "none"}});
  ASSERT_NE(managed, nullptr);
  const Movement m = b->movement(ctx, *managed);
  EXPECT_EQ(m.operation, Operation::Read);
  EXPECT_EQ(m.from->memory, Memory::Gpu);  // the kernel's faults migrate CPU-touched pages
  EXPECT_TRUE(m.to->processor);
  EXPECT_EQ(m.choices.text("managed_hint"), "none");
}
#endif

}  // namespace
}  // namespace commatlas
