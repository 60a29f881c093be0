// The one way an MPI call is checked: a failed call becomes a MeasurementError that names the
// call and where it was made. MPI_COMM_WORLD returns errors as codes (see start_mpi_group), so a
// failure becomes an error record instead of killing the job.
#pragma once

#include <mpi.h>

namespace commatlas::mpi {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* where);

}  // namespace commatlas::mpi

#define COMMATLAS_MPI_STRINGIFY_INNER(x) #x
#define COMMATLAS_MPI_STRINGIFY(x) COMMATLAS_MPI_STRINGIFY_INNER(x)
#define COMMATLAS_MPI(call)                                                                                        \
  do {                                                                                                             \
    const int commatlas_mpi_rc_ = (call);                                                                          \
    if (commatlas_mpi_rc_ != MPI_SUCCESS)                                                                          \
      ::commatlas::mpi::throw_mpi_error(commatlas_mpi_rc_, #call, __FILE__ ":" COMMATLAS_MPI_STRINGIFY(__LINE__)); \
  } while (0)
