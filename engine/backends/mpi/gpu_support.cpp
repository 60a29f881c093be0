#include "backends/mpi/gpu_support.h"

#include <mpi.h>

// Open MPI declares its CUDA extension here; other libraries may not ship the header at all.
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace commatlas {

std::string to_string(LibraryAnswer answer) {
  switch (answer) {
    case LibraryAnswer::Yes: return "yes";
    case LibraryAnswer::No: return "no";
    case LibraryAnswer::NotAsked: return "not asked";
  }
  return "?";
}

CudaSupportVerdict decide_cuda_support(const CudaSupportReport& r) {
  const auto no = [](std::string why) { return CudaSupportVerdict{CudaAwareness::NotSupported, std::move(why)}; };
  if (r.query.empty())
    return no("the MPI library offers no CUDA-support query (neither Open MPI's MPIX_Query_cuda_support nor "
              "MPICH's MPIX_GPU_query_support): support unknown, device pointers are not passed to it");
  if (r.built_with_cuda == LibraryAnswer::No)
    return no("the MPI library was built without CUDA support (MPIX_CUDA_AWARE_SUPPORT is 0)");
  switch (r.at_run_time) {
    case LibraryAnswer::Yes:
      return {CudaAwareness::Supported, r.query + " reports CUDA support"};
    case LibraryAnswer::No:
      return no(r.query + " reports no CUDA support at run time");
    case LibraryAnswer::NotAsked:
      break;
  }
  return no(r.query + " was not asked (MPI not initialised): support unknown, device pointers are not passed to it");
}

CudaSupportReport ask_mpi_about_cuda() {
  CudaSupportReport r;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const bool can_ask = initialized && !finalized;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
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

}  // namespace commatlas
