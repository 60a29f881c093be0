#include "backends/mpi/gpu_support.h"

#include <cstdlib>
#include <cstring>

#include <mpi.h>

// Open MPI declares its CUDA and ROCm extensions here; other libraries may not ship the header at all.
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace commatlas::mpi {

std::string to_string(LibraryAnswer answer) {
  switch (answer) {
    case LibraryAnswer::Yes: return "yes";
    case LibraryAnswer::No: return "no";
    case LibraryAnswer::NotAsked: return "not asked";
  }
  return "?";
}

CudaSupportVerdict decide_cuda_support(const CudaSupportReport& r) {
  const std::string& rt = r.runtime;
  const auto no = [&](std::string why) { return CudaSupportVerdict{CudaAwareness::NotSupported, std::move(why), rt}; };
  // Where the library cannot tell, the user's assertion decides; without one, unknown is no.
  const auto unknown = [&](std::string why) {
    if (r.user_asserts_support)
      return CudaSupportVerdict{CudaAwareness::Supported,
                                why + "; the user asserts " + rt + " support (" + kMpiGpuAwareEnv + "=1)", rt};
    return no(why + ", device pointers are not passed to it");
  };
  if (r.query.empty()) {
    if (rt == "CUDA")
      return no("the MPI library offers no CUDA-support query (neither Open MPI's MPIX_Query_cuda_support nor "
                "MPICH's MPIX_GPU_query_support): support unknown, device pointers are not passed to it");
    return unknown("the MPI library offers no " + rt + "-support query (neither Open MPI 5's MPIX_Query_" +
                   (rt == "ROCm" ? std::string("rocm") : rt) +
                   "_support nor MPICH's MPIX_GPU_query_support): support unknown");
  }
  if (r.built_with_cuda == LibraryAnswer::No)
    return no("the MPI library was built without " + rt + " support (MPIX_" + (rt == "ROCm" ? std::string("ROCM") : rt) +
              "_AWARE_SUPPORT is 0)");
  switch (r.at_run_time) {
    case LibraryAnswer::Yes:
      return {CudaAwareness::Supported, r.query + " reports " + rt + " support", rt};
    case LibraryAnswer::No:
      return no(r.query + " reports no " + rt + " support at run time");
    case LibraryAnswer::NotAsked:
      break;
  }
  if (rt == "CUDA")
    return no(r.query + " was not asked (MPI not initialised): support unknown, device pointers are not passed to it");
  return unknown(r.query + " was not asked (MPI not initialised): support unknown");
}

CudaSupportReport ask_mpi_about_cuda() {
  CudaSupportReport r;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const bool can_ask = initialized && !finalized;
#ifdef COMMATLAS_HIP
  // Not compile-checked in this project's CI: no ROCm-aware MPI is packaged where it is built.
  r.runtime = "ROCm";
  const char* asserted = std::getenv(kMpiGpuAwareEnv);
  r.user_asserts_support = asserted && std::strcmp(asserted, "1") == 0;
#if defined(OMPI_HAVE_MPI_EXT_ROCM) && OMPI_HAVE_MPI_EXT_ROCM
  r.query = "MPIX_Query_rocm_support (Open MPI extension)";
#if defined(MPIX_ROCM_AWARE_SUPPORT)
  r.built_with_cuda = MPIX_ROCM_AWARE_SUPPORT ? LibraryAnswer::Yes : LibraryAnswer::No;
#endif
  if (can_ask) r.at_run_time = MPIX_Query_rocm_support() ? LibraryAnswer::Yes : LibraryAnswer::No;
#elif defined(MPICH) && defined(MPIX_GPU_SUPPORT_HIP)
  r.query = "MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP) (MPICH)";
  if (can_ask) {
    int supported = 0;
    if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &supported) == MPI_SUCCESS)
      r.at_run_time = supported ? LibraryAnswer::Yes : LibraryAnswer::No;
  }
#else
  (void)can_ask;
#endif
#elif defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  r.query = "MPIX_Query_cuda_support (Open MPI extension)";
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  r.built_with_cuda = MPIX_CUDA_AWARE_SUPPORT ? LibraryAnswer::Yes : LibraryAnswer::No;
#endif
  if (can_ask) r.at_run_time = MPIX_Query_cuda_support() ? LibraryAnswer::Yes : LibraryAnswer::No;
#elif defined(MPICH) && defined(MPIX_GPU_SUPPORT_CUDA)
  r.query = "MPIX_GPU_query_support (MPICH)";
  if (can_ask) {
    int supported = 0;
    if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS)
      r.at_run_time = supported ? LibraryAnswer::Yes : LibraryAnswer::No;
  }
#else
  (void)can_ask;
#endif
  return r;
}

CudaSupportVerdict mpi_cuda_support() { return decide_cuda_support(ask_mpi_about_cuda()); }

}  // namespace commatlas::mpi
