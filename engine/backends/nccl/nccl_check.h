// The one way an NCCL call is checked: a failure becomes a MeasurementError carrying the call's
// text, its location, NCCL's error string and NCCL's own last-error detail.
#pragma once

#include <nccl.h>

namespace commatlas::nccl {

[[noreturn]] void throw_nccl_error(ncclResult_t rc, const char* call, const char* file, int line);

}  // namespace commatlas::nccl

#define COMMATLAS_NCCL(call)                                                              \
  do {                                                                                    \
    const ncclResult_t commatlas_nccl_rc_ = (call);                                       \
    if (commatlas_nccl_rc_ != ncclSuccess)                                                \
      ::commatlas::nccl::throw_nccl_error(commatlas_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)
