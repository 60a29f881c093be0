// Whether the MPI library may be handed CUDA device pointers.
//
// Asking is split from deciding: ask_mpi_about_cuda() records what the library said (and which
// query it offers at all); decide_cuda_support() turns that into a verdict with its reason. The
// decision is a pure function so the rules are unit-tested without any particular MPI installed.
// The default is "not supported": Open MPI 4.1.6 without CUDA support crashes on device pointers,
// so a GPU-aware benchmark runs only when the library says yes.
//
// The HIP build asks the ROCm way (Open MPI 5's MPIX_Query_rocm_support, MPICH's
// MPIX_GPU_SUPPORT_HIP). Older libraries offer no query: "unknown" is "no" there, unless the user
// asserts support with COMMATLAS_MPI_GPU_AWARE=1 (HIP build only; the verdict's reason records it).
// An explicit "no" from the library wins over the assertion.
#pragma once

#include <string>

namespace commatlas::mpi {

// One answer of the library: a query that was not available or not asked is NotAsked.
enum class LibraryAnswer { Yes, No, NotAsked };

constexpr const char* kMpiGpuAwareEnv = "COMMATLAS_MPI_GPU_AWARE";

struct CudaSupportReport {
  // The query the library offers: "MPIX_Query_cuda_support (Open MPI extension)",
  // "MPIX_GPU_query_support (MPICH)", or empty when it offers none.
  std::string query;
  // What the headers say about the build (Open MPI's MPIX_CUDA_AWARE_SUPPORT macro).
  LibraryAnswer built_with_cuda = LibraryAnswer::NotAsked;
  // What the query returned at run time (needs MPI initialised).
  LibraryAnswer at_run_time = LibraryAnswer::NotAsked;
  // The user's word where the library cannot tell (COMMATLAS_MPI_GPU_AWARE=1; HIP build only).
  bool user_asserts_support = false;
  // Whose support is asked: "CUDA", or "ROCm" on the HIP build.
  std::string runtime = "CUDA";
};

enum class CudaAwareness { Supported, NotSupported };

struct CudaSupportVerdict {
  CudaAwareness awareness = CudaAwareness::NotSupported;
  std::string reason;  // always set: why yes, or why not (the Skip reason of GPU-aware benchmarks)
  std::string runtime = "CUDA";  // "CUDA" or "ROCm": what "aware" means here
  bool supported() const { return awareness == CudaAwareness::Supported; }
};

CudaSupportVerdict decide_cuda_support(const CudaSupportReport& report);

// Queries the linked MPI library; call after MPI_Init (before it, the run-time answer is NotAsked).
// On the HIP build it asks about ROCm and reads COMMATLAS_MPI_GPU_AWARE.
CudaSupportReport ask_mpi_about_cuda();

// decide_cuda_support(ask_mpi_about_cuda()): what a GPU-aware benchmark calls before using
// device pointers, skipping with the verdict's reason when not supported.
CudaSupportVerdict mpi_cuda_support();

std::string to_string(LibraryAnswer answer);

}  // namespace commatlas::mpi
