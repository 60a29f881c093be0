// What the launch modes ask of the harness (cuda::set_launch_sampling), the one clock that refuses
// the persistent mode (cuda::time_launched), and the blocks a CUDA IPC buffer is allocated in
// (cuda::ipc_block_bytes): all without a GPU.
#include <gtest/gtest.h>

#if defined(COMMATLAS_HAVE_CUDA) && !defined(COMMATLAS_HIP)
#include <vector>

#include "backends/cuda/launch_timing.h"
#include "backends/cuda/memory.h"

namespace commatlas {
namespace {

TEST(LaunchTiming, EachModeAsksTheHarnessForItsOwnSampling) {
  const Accounting untouched;
  for (OpLaunch mode : {OpLaunch::LaunchIncluded, OpLaunch::BackToBack, OpLaunch::Graph, OpLaunch::Persistent}) {
    Accounting a;
    cuda::set_launch_sampling(a, mode);
    // The host waits for every launch-included op: one op per sample, its clock the host's.
    EXPECT_EQ(a.one_op_per_sample, mode == OpLaunch::LaunchIncluded) << to_string(mode);
    // CUDA events time back to back and graph: samples long enough for their ~2 us of overhead.
    const bool events = mode == OpLaunch::BackToBack || mode == OpLaunch::Graph;
    EXPECT_EQ(a.min_sample_s, events ? cuda::kEventClockMinSampleSeconds : untouched.min_sample_s) << to_string(mode);
  }
  // A ping-pong graph whose replay waits for the peer's asks for far longer samples (it sets its own).
  EXPECT_GE(cuda::kCoupledGraphMinSampleSeconds, 10 * cuda::kEventClockMinSampleSeconds);
}

TEST(LaunchTiming, ThePersistentModeIsNotTimedByTheHost) {
  std::vector<double> seconds;
  EXPECT_THROW(cuda::time_launched(
                   OpLaunch::Persistent, {}, 1, 1, seconds, [](std::size_t) {},
                   [](std::size_t) -> cudaGraphExec_t { return nullptr; }),
               MeasurementError);
  EXPECT_TRUE(seconds.empty());
}

TEST(IpcBlocks, EveryExportedBufferIsWholeTwoMiBBlocks) {
  constexpr std::size_t block = std::size_t{2} << 20;
  EXPECT_EQ(cuda::ipc_block_bytes(0), block);
  EXPECT_EQ(cuda::ipc_block_bytes(8), block);
  EXPECT_EQ(cuda::ipc_block_bytes(block), block);
  EXPECT_EQ(cuda::ipc_block_bytes(block + 1), 2 * block);
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{262144}, 3 * block - 7, std::size_t{1} << 30}) {
    const std::size_t got = cuda::ipc_block_bytes(bytes);
    EXPECT_EQ(got % block, 0u) << bytes;
    EXPECT_GE(got, bytes);
    EXPECT_LT(got - bytes, block) << bytes;
  }
}

}  // namespace
}  // namespace commatlas
#endif
