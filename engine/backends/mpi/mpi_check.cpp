#include "backends/mpi/mpi_check.h"

#include <string>

#include "core/error.h"

namespace commatlas::mpi {

void throw_mpi_error(int code, const char* call, const char* where) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  throw MeasurementError(std::string(call) + " failed at " + where + ": " +
                         (len > 0 ? std::string(text, static_cast<std::size_t>(len)) : "error " + std::to_string(code)));
}

}  // namespace commatlas::mpi
