// The GPU-initiated patterns without a GPU: the plans their exchange kernel runs (which flag, go-ahead
// and byte of which rank each message touches, for 2 to 12 ranks on 2-D and 3-D grids), the flags'
// sequencing, what the plans refuse, and the registration. The plans are run here by a host model of
// the kernel's three phases over host memory, so where every byte lands is checked as the halo and
// neighbour patterns' data checks would check it.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "core/registry.h"

#if defined(COMMATLAS_HAVE_CUDA) && !defined(COMMATLAS_HIP)
#include "fake_gpus.h"
#include "transport/geometry.h"
#include "transport/gpu_initiated.h"

namespace commatlas {
namespace {

// ---- a host model of the pattern kernel (gpu_initiated.cu: pattern_exchange_kernel) -------------

// One rank's memory as the GPU's would be: its send and receive buffers and control words.
struct HostRank {
  std::vector<unsigned char> send, inbox;
  std::vector<std::uint64_t> control = std::vector<std::uint64_t>(kPatternWords, 0);
};

std::vector<RankMemory> memories(std::vector<HostRank>& ranks) {
  std::vector<RankMemory> out;
  for (HostRank& r : ranks) out.push_back({r.inbox.data(), r.inbox.size(), r.control.data()});
  return out;
}

// Phase 1: the go-ahead of every message this rank receives, in its sender's memory.
void go_ahead(const StepPlan& p) {
  for (int r = 0; r < p.recvs; ++r) *p.recv[r].ready = p.seq;
}
// Whether message m may be stored now (the kernel's block waits until it may).
bool may_send(const StepPlan& p, int m) { return *p.send[m].ready >= p.seq; }
// Phase 2 for message m: every chunk stored, then its flag raised.
void send_one(const StepPlan& p, int m) {
  const WireMessage& w = p.send[m];
  for (int c = 0; c < w.chunks; ++c) {
    if (w.count) {
      *w.count = w.value;
    } else {
      const std::size_t begin = static_cast<std::size_t>(c) * w.chunk_bytes;
      if (begin < w.bytes) std::memcpy(w.dst + begin, w.src + begin, std::min(w.chunk_bytes, w.bytes - begin));
    }
    w.flags[c] = chunk_flag(p.seq - p.flag_lag, w.chunks);
  }
}
void send_all(const StepPlan& p) {
  for (int m = 0; m < p.sends; ++m) {
    ASSERT_TRUE(may_send(p, m)) << "message " << m << " has no go-ahead at call " << p.seq;
    send_one(p, m);
  }
}
// Phase 3: whether every chunk of every message received has arrived (the counts copied out).
bool arrived(const StepPlan& p, std::vector<std::uint64_t>* counts = nullptr) {
  for (int r = 0; r < p.recvs; ++r) {
    const WireMessage& w = p.recv[r];
    if (!flag_reached(w.flags[0], p.seq)) return false;
    const int chunks = flag_chunks(w.flags[0], p.seq);
    if (chunks < 1 || chunks > kPatternChunks) return false;
    for (int c = 1; c < chunks; ++c)
      if (!flag_reached(w.flags[c], p.seq)) return false;
    if (counts && w.count) counts->at(static_cast<std::size_t>(r)) = *w.count;
  }
  return true;
}

// Every rank's call in lock step: go-aheads, sends, then every receive must have arrived.
void run_call(std::vector<StepPlan>& plans, std::uint64_t seq, std::vector<std::vector<std::uint64_t>>* counts = nullptr) {
  for (StepPlan& p : plans) p.seq = seq;
  for (const StepPlan& p : plans) go_ahead(p);
  for (const StepPlan& p : plans) send_all(p);
  for (std::size_t r = 0; r < plans.size(); ++r)
    EXPECT_TRUE(arrived(plans[r], counts ? &(*counts)[r] : nullptr)) << "rank " << r << " call " << seq;
}

// ---- the patterns' messages, as engine/benchmarks/pattern/patterns_mpi.cpp plans them -------------

std::vector<int> neighbours(int rank, const std::vector<int>& dims) {
  std::vector<int> out;
  for (int k = 0; k < 2 * static_cast<int>(dims.size()); ++k) out.push_back(grid_neighbour(rank, dims, k));
  return out;
}

// Direction k's message goes to neighbour k with tag k and lands at opposite(k)'s slot there;
// direction k's receive comes from neighbour k with the tag it was sent with, opposite(k).
void plan_messages(int rank, const std::vector<int>& nb, const std::vector<std::size_t>& bytes, std::size_t slot,
                   std::vector<PeerMessage>& sends, std::vector<PeerMessage>& recvs, bool drop_rank0_first = false) {
  sends.clear();
  recvs.clear();
  for (int k = 0; k < static_cast<int>(nb.size()); ++k)
    if (!(drop_rank0_first && rank == 0 && k == 0))
      sends.push_back({nb[k], k, k * slot, bytes[k], static_cast<std::size_t>(opposite_direction(k)) * slot});
  for (int k = 0; k < static_cast<int>(nb.size()); ++k)
    if (!(drop_rank0_first && nb[k] == 0 && opposite_direction(k) == 0))
      recvs.push_back({nb[k], opposite_direction(k), k * slot, 0, 0});
}

std::uint64_t word_of(int rank, int direction, std::size_t i) {
  return (static_cast<std::uint64_t>(rank + 1) << 40) | (static_cast<std::uint64_t>(direction) << 32) | i;
}

// A halo exchange of `face_bytes` faces on `ranks` ranks: every rank's direction-k slot must hold
// neighbour k's face sent in the opposite direction, after each of several calls.
void check_halo(int ranks, int dims, std::size_t face_bytes) {
  const std::vector<int> grid = grid_dims(ranks, dims);
  const int faces = 2 * dims;
  std::vector<HostRank> mem(static_cast<std::size_t>(ranks));
  for (HostRank& r : mem) {
    r.send.assign(faces * face_bytes, 0);
    r.inbox.assign(faces * face_bytes, 0xFF);
  }
  const auto all = memories(mem);
  std::vector<StepPlan> plans;
  for (int r = 0; r < ranks; ++r) {
    std::vector<PeerMessage> sends, recvs;
    plan_messages(r, neighbours(r, grid), std::vector<std::size_t>(faces, face_bytes), face_bytes, sends, recvs);
    plans.push_back(plan_step(r, all, mem[r].send.data(), mem[r].send.size(), sends, recvs, nullptr));
    EXPECT_EQ(plans.back().sends, faces);
    EXPECT_EQ(plans.back().recvs, faces);
  }
  for (std::uint64_t call = 1; call <= 3; ++call) {
    for (int r = 0; r < ranks; ++r)
      for (int k = 0; k < faces; ++k)
        for (std::size_t i = 0; i < face_bytes / 8; ++i) {
          const std::uint64_t v = word_of(r, k, i) ^ (call << 56);
          std::memcpy(&mem[r].send[k * face_bytes + i * 8], &v, 8);
        }
    run_call(plans, call);
    for (int r = 0; r < ranks; ++r) {
      const std::vector<int> nb = neighbours(r, grid);
      for (int k = 0; k < faces; ++k)
        for (std::size_t i = 0; i < face_bytes / 8; ++i) {
          std::uint64_t have;
          std::memcpy(&have, &mem[r].inbox[k * face_bytes + i * 8], 8);
          ASSERT_EQ(have, word_of(nb[k], opposite_direction(k), i) ^ (call << 56))
              << ranks << " ranks " << dims << "-D, rank " << r << " face " << k << " word " << i << " call " << call;
        }
    }
  }
}

TEST(GpuInitiatedPatterns, EveryFaceLandsInTheNeighboursGhostSlotOnAnyGrid) {
  // 2 ranks (the lent machines: most faces go to the rank itself), and larger grids for N.
  for (int ranks : {2, 3, 4, 6, 8, 12}) {
    check_halo(ranks, 2, 2048);
    check_halo(ranks, 3, 8 * 37);  // faces not a multiple of 16 bytes: offsets 8-byte aligned only
  }
  check_halo(2, 2, (std::size_t{1} << 20) + 8);  // a face of many chunks (at most kPatternChunks)
}

TEST(GpuInitiatedPatterns, TheIrregularExchangeSendsCountsThenMessagesOfThoseSizes) {
  for (int ranks : {2, 4, 8}) {
    const std::vector<int> grid = grid_dims(ranks, 3);
    const std::uint64_t mean = 300;
    const std::size_t slot = (2 * mean + 1) * 8;  // an odd number of words: every other slot unaligned to 16
    std::vector<HostRank> mem(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      mem[r].send.resize(6 * slot);
      mem[r].inbox.assign(6 * slot, 0xFF);
      for (int k = 0; k < 6; ++k)
        for (std::size_t i = 0; i < slot / 8; ++i) {
          const std::uint64_t v = irregular_word(r, k, 0, i);
          std::memcpy(&mem[r].send[k * slot + i * 8], &v, 8);
        }
    }
    const auto all = memories(mem);
    std::uint64_t call = 0;
    for (std::uint64_t step = 0; step < 4; ++step) {
      std::vector<StepPlan> count_plans, data_plans;
      std::vector<std::vector<std::uint64_t>> got(static_cast<std::size_t>(ranks), std::vector<std::uint64_t>(6, ~0ull));
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> nb = neighbours(r, grid);
        std::vector<std::uint64_t> counts;
        std::vector<PeerMessage> sends, recvs;
        for (int k = 0; k < 6; ++k) counts.push_back(irregular_words(7, step, r, k, mean));
        plan_messages(r, nb, std::vector<std::size_t>(6, 8), 0, sends, recvs);
        count_plans.push_back(plan_step(r, all, nullptr, 0, sends, recvs, &counts));
        std::vector<std::size_t> bytes;
        for (std::uint64_t c : counts) bytes.push_back(c * 8);
        plan_messages(r, nb, bytes, slot, sends, recvs);
        data_plans.push_back(plan_step(r, all, mem[r].send.data(), mem[r].send.size(), sends, recvs, nullptr));
      }
      run_call(count_plans, ++call, &got);
      run_call(data_plans, ++call);
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> nb = neighbours(r, grid);
        for (int k = 0; k < 6; ++k) {
          const std::uint64_t want = irregular_words(7, step, nb[k], opposite_direction(k), mean);
          ASSERT_EQ(got[r][k], want) << "rank " << r << " count from direction " << k << " step " << step;
          for (std::uint64_t i = 0; i < want; ++i) {
            std::uint64_t have;
            std::memcpy(&have, &mem[r].inbox[k * slot + i * 8], 8);
            ASSERT_EQ(have, irregular_word(nb[k], opposite_direction(k), 0, i)) << "rank " << r << " direction " << k;
          }
        }
      }
    }
  }
}

TEST(GpuInitiatedPatterns, ASenderWaitsForTheReceiversGoAheadBeforeItOverwritesASlot) {
  // Two ranks on a 2-D grid (2x1): rank 0 runs its next call while rank 1 still reads the last one.
  const std::vector<int> grid = grid_dims(2, 2);
  std::vector<HostRank> mem(2);
  for (HostRank& r : mem) r.send.assign(4 * 64, 1), r.inbox.assign(4 * 64, 0);
  const auto all = memories(mem);
  std::vector<StepPlan> plans;
  for (int r = 0; r < 2; ++r) {
    std::vector<PeerMessage> sends, recvs;
    plan_messages(r, neighbours(r, grid), std::vector<std::size_t>(4, 64), 64, sends, recvs);
    plans.push_back(plan_step(r, all, mem[r].send.data(), mem[r].send.size(), sends, recvs, nullptr));
  }
  run_call(plans, 1);
  plans[0].seq = 2;
  go_ahead(plans[0]);
  for (int m = 0; m < plans[0].sends; ++m) {
    // Along y (extent 1) rank 0 is its own neighbour: its own go-ahead lets it store; along x the
    // neighbour is rank 1, which has not started call 2.
    const bool to_self = plans[0].send[m].dst >= mem[0].inbox.data() && plans[0].send[m].dst < mem[0].inbox.data() + mem[0].inbox.size();
    EXPECT_EQ(may_send(plans[0], m), to_self) << "message " << m;
  }
  EXPECT_FALSE(arrived(plans[0]));  // nor has anything of call 2 come from rank 1
  plans[1].seq = 2;
  go_ahead(plans[1]);
  for (int m = 0; m < plans[0].sends; ++m) EXPECT_TRUE(may_send(plans[0], m)) << "message " << m;
  send_all(plans[0]);
  send_all(plans[1]);
  EXPECT_TRUE(arrived(plans[0]));
  EXPECT_TRUE(arrived(plans[1]));
}

TEST(GpuInitiatedPatterns, AFlagTellsItsCallAndChunksAndOneShortNeverPasses) {
  for (std::uint64_t seq : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{1} << 40})
    for (int chunks : {1, 7, kPatternChunks}) {
      const std::uint64_t f = chunk_flag(seq, chunks);
      EXPECT_TRUE(flag_reached(f, seq));
      EXPECT_EQ(flag_chunks(f, seq), chunks);
      EXPECT_FALSE(flag_reached(f, seq + 1)) << "a flag never passes a later call";
      EXPECT_FALSE(flag_reached(chunk_flag(seq - 1, kPatternChunks), seq)) << "one call short";
      EXPECT_TRUE(flag_reached(f, seq - 1));  // flags only grow: an older wait passes
    }
  // The planted fault (COMMATLAS_TEST_GI_WRONG_FLAG): every flag of rank 1 one call short, so rank
  // 0 waits (on the GPU: until it gives up and fails the point).
  const std::vector<int> grid = grid_dims(2, 3);
  std::vector<HostRank> mem(2);
  for (HostRank& r : mem) r.send.assign(6 * 16, 0), r.inbox.assign(6 * 16, 0);
  const auto all = memories(mem);
  std::vector<StepPlan> plans;
  for (int r = 0; r < 2; ++r) {
    std::vector<PeerMessage> sends, recvs;
    plan_messages(r, neighbours(r, grid), std::vector<std::size_t>(6, 16), 16, sends, recvs);
    plans.push_back(plan_step(r, all, mem[r].send.data(), mem[r].send.size(), sends, recvs, nullptr));
    plans.back().seq = 1;
  }
  plans[1].flag_lag = 1;
  for (const StepPlan& p : plans) go_ahead(p);
  for (const StepPlan& p : plans) send_all(p);
  EXPECT_FALSE(arrived(plans[0]));
  // Rank 1's own faces along y and z (extent 1: it is its own neighbour) are one short as well.
  EXPECT_FALSE(arrived(plans[1]));
  plans[1].flag_lag = 0;
  send_all(plans[1]);
  EXPECT_TRUE(arrived(plans[0]));
  EXPECT_TRUE(arrived(plans[1]));
}

TEST(GpuInitiatedPatterns, TheMissingMessageFaultLeavesItsSlotUntouchedAndNobodyWaiting) {
  const std::vector<int> grid = grid_dims(2, 2);
  std::vector<HostRank> mem(2);
  for (HostRank& r : mem) r.send.assign(4 * 32, 7), r.inbox.assign(4 * 32, 0xFF);
  const auto all = memories(mem);
  std::vector<StepPlan> plans;
  for (int r = 0; r < 2; ++r) {
    std::vector<PeerMessage> sends, recvs;
    plan_messages(r, neighbours(r, grid), std::vector<std::size_t>(4, 32), 32, sends, recvs, /*drop_rank0_first=*/true);
    plans.push_back(plan_step(r, all, mem[r].send.data(), mem[r].send.size(), sends, recvs, nullptr));
  }
  run_call(plans, 1);
  // Rank 0's direction 0 goes to rank 1 and lands in its direction-1 slot: still poisoned.
  EXPECT_EQ(mem[1].inbox[1 * 32], 0xFF);
  EXPECT_EQ(mem[1].inbox[0 * 32], 7);
}

TEST(GpuInitiatedPatterns, MessagesAreCutIntoAtMostSixtyFourFlaggedChunks) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, std::size_t{16} << 10, (std::size_t{16} << 10) + 8,
                            std::size_t{1} << 20, (std::size_t{3} << 20) + 24, std::size_t{1} << 30}) {
    const PatternChunking ch = pattern_chunking(bytes);
    EXPECT_GE(ch.chunks, 1) << bytes;  // an empty message is still flagged
    EXPECT_LE(ch.chunks, kPatternChunks) << bytes;
    EXPECT_EQ(ch.chunk_bytes % 16, 0u) << bytes;  // every chunk of a message aligned alike
    EXPECT_GE(ch.chunk_bytes, kMinChunkBytes) << bytes;
    EXPECT_GE(static_cast<std::size_t>(ch.chunks) * ch.chunk_bytes, bytes) << bytes;
    if (bytes > 0) {
      EXPECT_LT(static_cast<std::size_t>(ch.chunks - 1) * ch.chunk_bytes, bytes) << bytes;  // no empty chunk
    }
  }
  EXPECT_EQ(pattern_chunking(8).chunks, 1);
  EXPECT_EQ(pattern_chunking(std::size_t{1} << 20).chunks, 64);
  // The flags of every slot fit their part of the control words.
  EXPECT_EQ(static_cast<int>(kPatternReady), kPatternSlots * kPatternChunks);
}

TEST(GpuInitiatedPatterns, APlanTheKernelCannotCarryIsRefusedWithTheReason) {
  std::vector<HostRank> mem(2);
  for (HostRank& r : mem) r.send.assign(256, 0), r.inbox.assign(256, 0);
  auto all = memories(mem);
  const auto refused = [&](const std::vector<PeerMessage>& sends, const std::vector<PeerMessage>& recvs,
                           const std::string& words, const std::vector<std::uint64_t>* counts = nullptr) {
    try {
      plan_step(0, all, mem[0].send.data(), mem[0].send.size(), sends, recvs, counts);
      ADD_FAILURE() << "accepted; expected: " << words;
    } catch (const MeasurementError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused({{1, 3, 0, 8, 0}, {1, 3, 8, 8, 8}}, {}, "two messages sent with tag 3");
  refused({}, {{1, 2, 0, 0, 0}, {0, 2, 8, 0, 0}}, "two messages received with tag 2");
  refused({{1, kPatternTags, 0, 8, 0}}, {}, "outside 0..15");
  refused({{2, 0, 0, 8, 0}}, {}, "rank 2's memory is not mapped");
  refused({{1, 0, 250, 8, 0}}, {}, "past the send buffer");
  refused({{1, 0, 0, 8, 252}}, {}, "past rank 1's receive buffer");
  refused(std::vector<PeerMessage>(kPatternTags + 1, PeerMessage{1, 0, 0, 0, 0}), {}, "at most 16");
  const std::vector<std::uint64_t> two = {1, 2};
  refused({{1, 0, 0, 8, 0}}, {}, "2 counts for 1 messages", &two);
  // Counts need no buffer room: their words are in the control memory.
  const std::vector<std::uint64_t> one = {5};
  const StepPlan p = plan_step(0, all, nullptr, 0, {{1, 4, 0, 8, 0}}, {{1, 5, 0, 8, 0}}, &one);
  EXPECT_TRUE(p.counts);
  EXPECT_EQ(p.send[0].count, mem[1].control.data() + kPatternCounts + 4);
  EXPECT_EQ(p.send[0].flags, mem[1].control.data() + (kPatternTags + 4) * kPatternChunks);  // a slot apart from data
  EXPECT_EQ(p.recv[0].ready, mem[1].control.data() + kPatternReady + kPatternTags + 5);
  EXPECT_EQ(p.own_abort, mem[0].control.data() + kPatternAbort);
}

TEST(GpuInitiatedPatterns, TheRecordSaysTheExchangeIsLaunchedPerCallAndWaitedFor) {
  const std::string w = pattern_words(1, "CUDA IPC mapping");
  for (const char* part : {"GPU 1", "CUDA IPC mapping", "straight into the neighbour's receive buffer", "go-ahead",
                           "release, system scope", "acquire", "one kernel per exchange, launched by the host",
                           "no persistent kernel"})
    EXPECT_NE(w.find(part), std::string::npos) << part << " in: " << w;
}

#ifdef COMMATLAS_HAVE_MPI
TEST(GpuInitiatedPatterns, HaloAndNeighbourAreRegisteredOverCudaIpcWithoutTheAllreduce) {
  const testing::FakeGpus gpus(2);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, discover_host());
  for (const char* key : {"pattern.halo2d.gpu_initiated", "pattern.halo3d.gpu_initiated", "pattern.neighbor.gpu_initiated"}) {
    const Benchmark* b = Registry::instance().find(key);
    ASSERT_NE(b, nullptr) << key;
    EXPECT_EQ(b->info().suite, "mpi-gpu") << key;
    EXPECT_EQ(b->info().metric, Metric::Latency) << key;
    const auto why = b->unavailable(ctx);
    ASSERT_TRUE(why.has_value()) << key;  // one process here: the patterns need an MPI job
    EXPECT_NE(why->find("MPI"), std::string::npos) << *why;
    for (const Params& p : b->variants(ctx)) {
      const Movement m = b->movement(ctx, p);
      EXPECT_EQ(m.mechanism, Mechanism::GpuInitiated) << key;
      ASSERT_TRUE(m.from && m.to);
      EXPECT_EQ(m.from->memory, Memory::Gpu) << key;
      EXPECT_FALSE(p.has("launch_mode")) << key;  // how the maker tells a pattern from a protocol
    }
  }
  EXPECT_EQ(Registry::instance().find("pattern.bucketed_allreduce.gpu_initiated"), nullptr);
}
#endif

}  // namespace
}  // namespace commatlas

#else
TEST(GpuInitiatedPatterns, NotBuiltWithoutCuda) { GTEST_SKIP() << "the GPU-initiated mechanism is built for CUDA only"; }
#endif
