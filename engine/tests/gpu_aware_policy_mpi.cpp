// The GPU-aware decision wiring: which pointer a GPU-buffer MPI benchmark hands to MPI, and
// that a device pointer reaches MPI only when the library's CUDA-support verdict says yes.
#include <gtest/gtest.h>

#include "backends/mpi/gpu_pointer_policy.h"

namespace commatlas::mpi {
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

// The HIP build asks the ROCm way; the decision rules are the same pure function.
CudaSupportReport rocm(std::string query, LibraryAnswer built, LibraryAnswer run, bool asserted) {
  CudaSupportReport r;
  r.runtime = "ROCm";
  r.query = std::move(query);
  r.built_with_cuda = built;
  r.at_run_time = run;
  r.user_asserts_support = asserted;
  return r;
}

TEST(GpuAwarePolicyRocm, OpenMpi5SaysYes) {
  const auto v = decide_cuda_support(
      rocm("MPIX_Query_rocm_support (Open MPI extension)", LibraryAnswer::Yes, LibraryAnswer::Yes, false));
  EXPECT_TRUE(v.supported());
  EXPECT_NE(v.reason.find("reports ROCm support"), std::string::npos) << v.reason;
  EXPECT_FALSE(gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, v));
}

TEST(GpuAwarePolicyRocm, UnknownIsNoUnlessTheUserAssertsIt) {
  const auto unknown = decide_cuda_support(rocm("", LibraryAnswer::NotAsked, LibraryAnswer::NotAsked, false));
  EXPECT_FALSE(unknown.supported());
  EXPECT_NE(unknown.reason.find("MPIX_Query_rocm_support"), std::string::npos) << unknown.reason;
  const auto refusal = gpu_pointer_refusal(GpuMessagePath::Direct, AllocatorMemory::Gpu, unknown);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("ROCm-aware"), std::string::npos) << *refusal;

  const auto asserted = decide_cuda_support(rocm("", LibraryAnswer::NotAsked, LibraryAnswer::NotAsked, true));
  EXPECT_TRUE(asserted.supported());
  EXPECT_NE(asserted.reason.find("COMMATLAS_MPI_GPU_AWARE=1"), std::string::npos) << asserted.reason;
  // MPI not initialised yet: the query exists but was not asked; the assertion covers it too.
  EXPECT_TRUE(decide_cuda_support(rocm("MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP) (MPICH)", LibraryAnswer::NotAsked,
                                       LibraryAnswer::NotAsked, true))
                  .supported());
}

TEST(GpuAwarePolicyRocm, TheLibrarysNoWinsOverTheAssertion) {
  const auto built_without = decide_cuda_support(
      rocm("MPIX_Query_rocm_support (Open MPI extension)", LibraryAnswer::No, LibraryAnswer::No, true));
  EXPECT_FALSE(built_without.supported());
  EXPECT_NE(built_without.reason.find("built without ROCm"), std::string::npos) << built_without.reason;
  EXPECT_FALSE(decide_cuda_support(rocm("MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP) (MPICH)", LibraryAnswer::NotAsked,
                                        LibraryAnswer::No, true))
                   .supported());
}

TEST(GpuAwarePolicy, CudaIgnoresTheAssertion) {
  CudaSupportReport r;
  r.user_asserts_support = true;  // ask_mpi_about_cuda never sets it on the CUDA build
  EXPECT_FALSE(decide_cuda_support(r).supported());
}

}  // namespace
}  // namespace commatlas::mpi
