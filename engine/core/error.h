// Errors the engine raises, and the one way benchmarks decline to run.
#pragma once

#include <stdexcept>
#include <string>

namespace commatlas {

// Bad input from the user: printed as one line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A benchmark cannot run here (no GPU, too little memory, one rank only, ...). The run records
// the reason and goes on; it is never an error.
class Skip : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something failed while measuring (a CUDA/MPI/NCCL call, a data check). Recorded against the
// benchmark and size; the run goes on when the process is still healthy.
class MeasurementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The process can no longer measure anything trustworthy (a corrupted GPU context): the point
// is recorded as an error, then the run ends with this message instead of recording more.
class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string errno_message(const std::string& what);

}  // namespace commatlas

// Wraps a call whose failure is reported through errno-style return codes (0 = success).
#define COMMATLAS_CHECK_POSIX(call)                                                          \
  do {                                                                                       \
    if ((call) != 0)                                                                         \
      throw ::commatlas::MeasurementError(::commatlas::errno_message(#call " at " __FILE__)); \
  } while (0)
