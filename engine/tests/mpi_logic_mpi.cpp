// Pure logic of the MPI backend: the CUDA-support decision, the collectives' expected results
// against a simulation of what each MPI call does, and the point-to-point byte counts. No MPI
// call is made (MPI is not initialised in the test process).
#include <gtest/gtest.h>

#include <vector>

#include "collective/collective_mpi.h"
#include "backends/mpi/gpu_support.h"
#include "backends/mpi/message_buffers.h"
#include "transport/mpi_transport_mpi.h"
#include "transport/transport.h"

namespace commatlas::mpi {
namespace {

CudaSupportReport open_mpi(LibraryAnswer built, LibraryAnswer runtime) {
  return {"MPIX_Query_cuda_support (Open MPI extension)", built, runtime};
}

TEST(MpiCudaSupport, OnlyALibraryThatSaysYesIsTrusted) {
  EXPECT_TRUE(decide_cuda_support(open_mpi(LibraryAnswer::Yes, LibraryAnswer::Yes)).supported());
  EXPECT_TRUE(
      decide_cuda_support({"MPIX_GPU_query_support (MPICH)", LibraryAnswer::NotAsked, LibraryAnswer::Yes}).supported());
  EXPECT_FALSE(decide_cuda_support(open_mpi(LibraryAnswer::Yes, LibraryAnswer::No)).supported());
  EXPECT_FALSE(decide_cuda_support(open_mpi(LibraryAnswer::Yes, LibraryAnswer::NotAsked)).supported());
}

TEST(MpiCudaSupport, BuildWithoutCudaWinsOverARuntimeYes) {
  const auto v = decide_cuda_support(open_mpi(LibraryAnswer::No, LibraryAnswer::Yes));
  EXPECT_FALSE(v.supported());
  EXPECT_NE(v.reason.find("built without CUDA"), std::string::npos) << v.reason;
}

TEST(MpiCudaSupport, NoQueryMeansUnknownMeansNotSupported) {
  const auto v = decide_cuda_support({"", LibraryAnswer::NotAsked, LibraryAnswer::NotAsked});
  EXPECT_FALSE(v.supported());
  EXPECT_NE(v.reason.find("unknown"), std::string::npos) << v.reason;
}

TEST(MpiCudaSupport, EveryVerdictHasAReason) {
  for (auto built : {LibraryAnswer::Yes, LibraryAnswer::No, LibraryAnswer::NotAsked})
    for (auto runtime : {LibraryAnswer::Yes, LibraryAnswer::No, LibraryAnswer::NotAsked})
      EXPECT_FALSE(decide_cuda_support(open_mpi(built, runtime)).reason.empty());
}

TEST(MpiPointToPoint, BytesPerOpCountEachDirectionOnce) {
  EXPECT_EQ(p2p_bytes_per_op(Protocol::PingPong, 8, kMessageWindow), 8.0);
  EXPECT_EQ(p2p_bytes_per_op(Protocol::Bandwidth, 4096, kMessageWindow), 64.0 * 4096);
  EXPECT_EQ(p2p_bytes_per_op(Protocol::Bibw, 4096, kMessageWindow), 2.0 * 64 * 4096);
  // A transport whose operation is one message (a copy, one NCCL call) counts one per direction.
  EXPECT_EQ(p2p_bytes_per_op(Protocol::Bandwidth, 4096, 1), 4096.0);
  EXPECT_EQ(p2p_bytes_per_op(Protocol::Bibw, 4096, 1), 2.0 * 4096);
}

// What each rank's receive buffer holds after the MPI call, computed from the MPI standard's
// definition of the call over every rank's send buffer.
std::vector<double> simulate(CollectiveOp op, const CollectiveShape& s, int ranks, int rank) {
  const auto src = [](int r, std::size_t i) { return static_cast<double>(collective_source_value(r, i)); };
  std::vector<double> out;
  const std::size_t block = s.chunk_elements;
  switch (op) {
    case CollectiveOp::AllReduce:
      for (std::size_t i = 0; i < s.send_elements; ++i) {
        double sum = 0;
        for (int r = 0; r < ranks; ++r) sum += src(r, i);
        out.push_back(sum);
      }
      break;
    case CollectiveOp::AllGather:
      for (int r = 0; r < ranks; ++r)
        for (std::size_t i = 0; i < block; ++i) out.push_back(src(r, i));
      break;
    case CollectiveOp::ReduceScatter:
      for (std::size_t i = 0; i < block; ++i) {
        double sum = 0;
        for (int r = 0; r < ranks; ++r) sum += src(r, rank * block + i);
        out.push_back(sum);
      }
      break;
    case CollectiveOp::AllToAll:
      for (int r = 0; r < ranks; ++r)
        for (std::size_t i = 0; i < block; ++i) out.push_back(src(r, rank * block + i));
      break;
    case CollectiveOp::Broadcast:
      if (rank != 0)
        for (std::size_t i = 0; i < s.send_elements; ++i) out.push_back(src(0, i));
      break;
    case CollectiveOp::Reduce:
      break;
  }
  return out;
}

TEST(MpiCollectives, ExpectedResultsMatchTheMpiDefinitions) {
  const CollectiveOp ops[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                              CollectiveOp::AllToAll, CollectiveOp::Broadcast};
  for (CollectiveOp op : ops) {
    const CollectiveDefinition* d = find_mpi_collective(op);
    ASSERT_NE(d, nullptr) << to_string(op) << " is not registered";
    for (int ranks : {2, 3, 4}) {
      const auto shape = collective_shape(op, 96, ranks, kCollectiveElementBytes);
      ASSERT_TRUE(shape.has_value());
      for (int rank = 0; rank < ranks; ++rank) {
        const auto want = simulate(op, *shape, ranks, rank);
        const std::size_t recv = d->layout ? d->layout(*shape, rank).recv_elements : shape->recv_elements;
        ASSERT_EQ(recv, want.size()) << to_string(op) << " ranks=" << ranks << " rank=" << rank;
        for (std::size_t j = 0; j < want.size(); ++j)
          ASSERT_EQ(d->expected(j, *shape, ranks, rank), want[j]) << to_string(op) << " element " << j;
      }
    }
  }
}

TEST(MpiCollectives, SourceValuesAreWholeAndSumExactly) {
  for (std::size_t i = 0; i < 5000; ++i) {
    const float v = collective_source_value(7, i);
    EXPECT_EQ(v, static_cast<float>(static_cast<int>(v)));
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1020.0f);
  }
  // Different ranks send different values, so a result taken from the wrong rank is caught.
  EXPECT_NE(collective_source_value(0, 0), collective_source_value(1, 0));
}

TEST(MpiCollectives, BroadcastRootReceivesNothingOthersEverything) {
  const CollectiveDefinition* d = find_mpi_collective(CollectiveOp::Broadcast);
  ASSERT_NE(d, nullptr);
  ASSERT_NE(d->layout, nullptr);
  const auto shape = *collective_shape(CollectiveOp::Broadcast, 64, 4, kCollectiveElementBytes);
  EXPECT_EQ(d->layout(shape, 0).recv_elements, 0u);
  EXPECT_EQ(d->layout(shape, 0).send_elements, 16u);
  EXPECT_EQ(d->layout(shape, 3).recv_elements, 16u);
  EXPECT_EQ(d->layout(shape, 3).send_elements, 0u);
}

}  // namespace
}  // namespace commatlas::mpi

namespace commatlas::mpi {
namespace {

// A size sweep runs inside the buffers of its largest size: smaller sizes fit, the receive side
// is poisoned again, the source is left as published; larger ones are refused, changing nothing.
TEST(MessageBuffers, ResizeWorksInsideTheAllocationAndPoisonsTheReceiveSide) {
  auto b = make_message_buffers(MessageMemory::Host, {4096, 4096});
  for (std::size_t i = 0; i < 4096; ++i) {
    b->send_view()[i] = static_cast<unsigned char>(i);
    static_cast<unsigned char*>(b->recv_data())[i] = static_cast<unsigned char>(i);
  }
  b->publish_send();
  EXPECT_FALSE(b->resize({8192, 4096}));
  EXPECT_FALSE(b->resize({4096, 4097}));
  EXPECT_EQ(b->send_bytes(), 4096u);
  EXPECT_EQ(b->recv_bytes(), 4096u);
  EXPECT_EQ(b->fetch_recv()[100], 100);  // a refused resize poisons nothing
  ASSERT_TRUE(b->resize({0, 64}));
  EXPECT_EQ(b->send_bytes(), 0u);
  EXPECT_EQ(b->recv_bytes(), 64u);
  for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(b->fetch_recv()[i], 0xFF) << i;
  ASSERT_TRUE(b->resize({4096, 4096}));  // back up to the allocation: still inside it
  EXPECT_EQ(b->send_view()[4095], static_cast<unsigned char>(4095));
}

// The report ranks series of one path against each other only when their direction matches: a
// bibw figure (both directions summed) must never be called faster than a one-way figure.
TEST(P2pDirection, EachProtocolNamesItsDirection) {
  EXPECT_STREQ(p2p_direction(Protocol::Bandwidth), "uni");
  EXPECT_STREQ(p2p_direction(Protocol::Bibw), "bi");
  EXPECT_STREQ(p2p_direction(Protocol::PingPong), "half_round_trip");
}

}  // namespace
}  // namespace commatlas::mpi
