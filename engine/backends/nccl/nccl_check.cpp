#include "backends/nccl/nccl_check.h"

#include <string>

#include "core/error.h"

namespace commatlas::nccl {

void throw_nccl_error(ncclResult_t rc, const char* call, const char* file, int line) {
  std::string text = std::string(call) + " failed: " + ncclGetErrorString(rc);
  // The last error is kept per thread by NCCL (the comm argument is not consulted), and often
  // says which peer or transport failed, which the error string does not.
  const char* detail = ncclGetLastError(nullptr);
  if (detail && *detail) text += " (" + std::string(detail) + ")";
  text += " at " + std::string(file) + ":" + std::to_string(line);
  throw MeasurementError(text);
}

}  // namespace commatlas::nccl
