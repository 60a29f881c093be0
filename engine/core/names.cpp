// Names of the benchmark model's enums as they appear in records and listings (schema enums).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "core/benchmark.h"
#include "core/error.h"
#include "core/group.h"

namespace commatlas {

std::string to_string(Category c) {
  switch (c) {
    case Category::DirectAccess: return "direct_access";
    case Category::ExplicitCopy: return "explicit_copy";
    case Category::PointToPoint: return "point_to_point";
    case Category::Collective: return "collective";
    case Category::Pattern: return "pattern";
    case Category::Reference: return "reference";
  }
  return "unknown";
}

std::string to_string(Interface i) {
  switch (i) {
    case Interface::Memcpy: return "memcpy";
    case Interface::CpuLoadStore: return "cpu_load_store";
    case Interface::SmKernel: return "sm_kernel";
    case Interface::CopyEngine: return "copy_engine";
    case Interface::Prefetch: return "prefetch";
    case Interface::Mpi: return "mpi";
    case Interface::MpiStaged: return "mpi_staged";
    case Interface::MpiGpuAware: return "mpi_gpu_aware";
    case Interface::CudaIpc: return "cuda_ipc";
    case Interface::Nccl: return "nccl";
    case Interface::Torch: return "torch";
    case Interface::Harness: return "harness";
  }
  return "unknown";
}

std::string to_string(Metric m) { return m == Metric::Bandwidth ? "bandwidth" : "latency"; }

std::string errno_message(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string SingleProcessGroup::hostname() const {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

void SingleProcessGroup::abort(int code) { std::_Exit(code); }

}  // namespace commatlas

namespace commatlas {
std::string to_string(Tier t) { return t == Tier::Default ? "default" : "full"; }
}  // namespace commatlas
