// The MPI library as the engine reads it from MPI_Get_library_version. Each string below is one a
// library really printed; where it was recorded is said next to it.
#include <gtest/gtest.h>

#include "core/mpi_library.h"

namespace commatlas {
namespace {

struct Case {
  const char* where;
  const char* text;
  const char* id;
  const char* name;
  const char* version;
};

const Case kCases[] = {
    // Debian 12's openmpi-bin 4.1.4, the CI machine (a 4-line C program calling MPI_Get_library_version).
    {"Debian 12 openmpi 4.1.4",
     "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
     "openmpi", "Open MPI", "4.1.4"},
    // The H200 device machine's system Open MPI (results/nvidia-h200-x2/atlas-1gpu/quick, meta).
    {"Ubuntu openmpi 4.1.6",
     "Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023",
     "openmpi", "Open MPI", "4.1.6"},
    // A source build's (a test in a spack-based Python tool, stored public source).
    {"Open MPI 4.1.1 source build",
     "Open MPI v4.1.1, package: Open MPI user@host Distribution, ident: 4.1.1, repo rev: v4.1.1, Apr 24, 2021",
     "openmpi", "Open MPI", "4.1.1"},
    // Debian 12's mpich 4.0.2 (ch4:ucx), the CI machine; the first two of its many lines.
    {"Debian 12 mpich 4.0.2",
     "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH ABI:\t14:2:2\nMPICH Device:\tch4:ucx\n",
     "mpich", "MPICH", "4.0.2"},
    // pmodels/mpich pull request 6123 (mpichversion printing this text), MPICH's CI.
    {"MPICH 4.1a1 development copy",
     "MPICH Version:      4.1a1\nMPICH Release date: unreleased development copy\nMPICH ABI:          0:0:0\nMPICH Device:       ch4:ofi\n",
     "mpich", "MPICH", "4.1a1"},
    // MPICH 3.3.2 (ch3:nemesis) built by spack, from the same test file as Open MPI 4.1.1.
    {"MPICH 3.3.2",
     "MPICH Version:\t3.3.2\nMPICH Release date:\tTue Nov 12 21:23:16 CST 2019\nMPICH ABI:\t13:8:1\nMPICH Device:\tch3:nemesis\n",
     "mpich", "MPICH", "3.3.2"},
    // MVAPICH2 2.3.5 (ch3:mrail), from the same test file.
    {"MVAPICH2 2.3.5",
     "MVAPICH2 Version      :\t2.3.5\nMVAPICH2 Release date :\tMon November 30 22:00:00 EST 2020\nMVAPICH2 Device       :\tch3:mrail\n",
     "mvapich", "MVAPICH2", "2.3.5"},
    // MVAPICH2 2.3.2 on a university cluster (a course's ring test output, stored public source).
    {"MVAPICH2 2.3.2",
     "MVAPICH2 Version      : 2.3.2\nMVAPICH2 Release date : Fri August 9 22:00:00 EST 2019\nMVAPICH2 Device       : ch3:mrail\n",
     "mvapich", "MVAPICH2", "2.3.2"},
    // MVAPICH 3.x and MVAPICH-Plus: spack's mvapich and mvapich-plus packages (OSU's own
    // OSU-Nowlab/spack-packages too) read both with ^MVAPICH Version:\s*(\S+). No full text of
    // either was found recorded; these two are that first line, and for Plus an install prefix
    // of the form spack's mvapich-plus installer writes (an assumption, said here).
    {"MVAPICH 3.0 (first line as spack matches it)", "MVAPICH Version:\t3.0\nMVAPICH Release date:\t...\n",
     "mvapich", "MVAPICH", "3.0"},
    {"MVAPICH-Plus 4.1 (first line as spack matches it, Plus named by its prefix)",
     "MVAPICH Version:\t4.1\nMVAPICH configure:\t--prefix=/opt/mvapich-plus/4.1\n",
     "mvapich-plus", "MVAPICH-Plus", "4.1"},
    // NERSC Perlmutter, mpi4py's MPI.Get_library_version() under srun (a NERSC user's notes).
    {"Cray MPICH 8.1.25.17 (Perlmutter)",
     "MPI VERSION    : CRAY MPICH version 8.1.25.17 (ANL base 3.4a2)\nMPI BUILD INFO : Sun Feb 26 15:15 2023 (git hash aecd99f)\n",
     "cray-mpich", "Cray MPICH", "8.1.25.17"},
    // MPI.jl's documentation, a Cray system's libmpi_nvidia.so.
    {"Cray MPICH 8.1.28.2",
     "MPI VERSION    : CRAY MPICH version 8.1.28.2 (ANL base 3.4a2)\nMPI BUILD INFO : Wed Nov 15 21:59 2023 (git hash 1cde46f)\n",
     "cray-mpich", "Cray MPICH", "8.1.28.2"},
    // Cray MPICH 7 (Cray XC), the spack-based test file again.
    {"Cray MPICH 7.7.14",
     "MPI VERSION    : CRAY MPICH version 7.7.14 (ANL base 3.2)\nMPI BUILD INFO : Built Tue May 19 13:54:36 2020 (git hash e25eab9) MT-G\n\n",
     "cray-mpich", "Cray MPICH", "7.7.14"},
    // Intel MPI, the same test file.
    {"Intel MPI 2019", "Intel(R) MPI Library 2019 Update 6 for Linux* OS\n\n", "intel-mpi", "Intel MPI", "2019"},
};

TEST(MpiLibrary, EachRecordedStringNamesItsLibraryAndVersion) {
  for (const Case& c : kCases) {
    const MpiLibrary lib = parse_mpi_library(c.text);
    EXPECT_EQ(lib.id, c.id) << c.where;
    EXPECT_EQ(lib.name, c.name) << c.where;
    EXPECT_EQ(lib.version, c.version) << c.where;
    EXPECT_EQ(lib.version_text.find('\n'), std::string::npos) << c.where;
  }
}

TEST(MpiLibrary, CrayMpichIsNotPlainMpichAndMvapichIsNotMpich) {
  // Both derive from MPICH and name it in their text ("ANL base", "MPICH Device" lines).
  EXPECT_EQ(parse_mpi_library("MPI VERSION    : CRAY MPICH version 8.1.30.1 (ANL base 3.4a2)").id, "cray-mpich");
  EXPECT_EQ(parse_mpi_library("MVAPICH2 Version      :\t2.3.7\nMPICH Device: ch3\n").id, "mvapich");
}

TEST(MpiLibrary, LabelIsNameAndVersion) {
  EXPECT_EQ(parse_mpi_library("Open MPI v4.1.6, package: Debian OpenMPI").label(), "Open MPI 4.1.6");
  EXPECT_EQ(parse_mpi_library("MPICH Version:\t4.0.2\n").label(), "MPICH 4.0.2");
}

TEST(MpiLibrary, AnUnknownLibraryKeepsItsFirstWord) {
  const MpiLibrary lib = parse_mpi_library("FooMPI release 2.0\nmore\n");
  EXPECT_EQ(lib.id, "unknown");
  EXPECT_EQ(lib.name, "FooMPI");
  EXPECT_EQ(lib.version, "");
  EXPECT_EQ(lib.version_text, "FooMPI release 2.0");
}

}  // namespace
}  // namespace commatlas
