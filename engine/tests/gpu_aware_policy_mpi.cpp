// The GPU-aware decision wiring: which pointer a GPU-buffer MPI benchmark hands to MPI, and
// that a device pointer reaches MPI only when the library's CUDA-support verdict says yes.
#include <gtest/gtest.h>

#include "backends/mpi/gpu_pointer_policy.h"

namespace commatlas {
namespace {

CudaSupportVerdict open_mpi_4_1_6() {
  // What the GPU machines' own Open MPI answers: built without CUDA.
  return decide_cuda_support({"MPIX_Query_cuda_support (Open MPI extension)", LibraryAnswer::No, LibraryAnswer::No});
}

CudaSupportVerdict cuda_aware() {
  return decide_cuda_support({"MPIX_Query_cuda_support (Open MPI extension)", LibraryAnswer::Yes, LibraryAnswer::Yes});
}

TEST(GpuAwarePolicy, StagingAlwaysHandsMpiHostMemory) {
  EXPECT_EQ(pointer_handed_to_mpi(GpuMessagePath::Staged, AllocatorMemory::Gpu), MpiPointer::Host);
  EXPECT_EQ(pointer_handed_to_mpi(GpuMessagePath::Staged, AllocatorMemory::Host), MpiPointer::Host);
  EXPECT_FALSE(gpu_pointer_refusal(GpuMessagePath::Staged, AllocatorMemory::Gpu, open_mpi_4_1_6()));
}

TEST(GpuAwarePolicy, DevicePointersNeedACudaAwareLibrary) {
  EXPECT_EQ(pointer_handed_to_mpi(GpuMessagePath::Direct, AllocatorMemory::Gpu), MpiPointer::Device);
  const auto refusal = gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, open_mpi_4_1_6());
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("built without CUDA"), std::string::npos) << *refusal;  // the library's own reason travels
  EXPECT_FALSE(gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, cuda_aware()));
}

TEST(GpuAwarePolicy, UnknownSupportIsRefused) {
  const auto unknown = decide_cuda_support({"", LibraryAnswer::NotAsked, LibraryAnswer::NotAsked});
  EXPECT_TRUE(gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, unknown));
}

TEST(GpuAwarePolicy, HostAllocatorsRunOnAnyLibrary) {
  EXPECT_EQ(pointer_handed_to_mpi(GpuMessagePath::Direct, AllocatorMemory::Host), MpiPointer::Host);
  EXPECT_FALSE(gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Host, open_mpi_4_1_6()));
}

}  // namespace
}  // namespace commatlas
