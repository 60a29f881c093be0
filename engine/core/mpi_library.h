// Which MPI library a process runs on, read from the library's own words (MPI_Get_library_version).
// Pure text in, facts out: no MPI here, so the unit tests check it against strings recorded from
// each library without linking any of them.
#pragma once

#include <string>

namespace commatlas {

struct MpiLibrary {
  std::string id;        // "openmpi", "mpich", "mvapich", "mvapich-plus", "cray-mpich", "intel-mpi", "unknown"
  std::string name;      // as people write it: "Open MPI", "MPICH", "MVAPICH2", "MVAPICH-Plus", "Cray MPICH"
  std::string version;   // "4.1.6", "8.1.30.1"; empty when the text gives none
  std::string gpu_support;  // "cuda" (GPU-aware for CUDA buffers), "none", or "" when not asked
  std::string version_text; // the first line of MPI_Get_library_version, as the library wrote it

  // "Open MPI 4.1.6": what a record's movement names as its choice.
  std::string label() const { return version.empty() ? name : name + " " + version; }
};

// Reads the library and its version from MPI_Get_library_version's text (all of it or its
// first line). A text of no library it knows is id "unknown", its name the text's first word.
MpiLibrary parse_mpi_library(const std::string& text);

}  // namespace commatlas
