#include "core/mpi_library.h"

#include <cctype>
#include <regex>

namespace commatlas {
namespace {

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ',' || std::isspace(static_cast<unsigned char>(line.back())) || line.back() == '\0'))
    line.pop_back();
  return line;
}

// The first capture of `pattern` in `text`, or "".
std::string find(const std::string& text, const char* pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return m[1].str();
  return "";
}

}  // namespace

MpiLibrary parse_mpi_library(const std::string& text) {
  MpiLibrary lib;
  lib.version_text = first_line(text);
  // Order matters: Cray MPICH and MVAPICH say "MPICH" too, so the derived libraries come first.
  if (text.find("CRAY MPICH") != std::string::npos) {
    // "MPI VERSION    : CRAY MPICH version 8.1.30.1 (ANL base 3.4a2)"
    lib.id = "cray-mpich";
    lib.name = "Cray MPICH";
    lib.version = find(text, R"(CRAY MPICH version ([0-9][0-9A-Za-z.]*))");
  } else if (text.rfind("MVAPICH", 0) == 0) {
    // "MVAPICH2 Version      :\t2.3.5" (MVAPICH2, MVAPICH2-GDR), "MVAPICH Version:\t3.0" (3.x and,
    // as spack's mvapich-plus package reads it, MVAPICH-Plus too: the first line does not tell them
    // apart, so Plus is named only where the rest of the text says it, e.g. its install prefix).
    lib.version = find(text, R"(^MVAPICH[^:\n]*Version\s*:\s*([0-9][0-9A-Za-z.]*))");
    if (std::regex_search(text, std::regex(R"(mvapich[-_ ]?plus)", std::regex::icase))) {
      lib.id = "mvapich-plus";
      lib.name = "MVAPICH-Plus";
    } else {
      lib.id = "mvapich";
      lib.name = find(text, R"(^(MVAPICH2?(-GDR|-X)?))");
    }
  } else if (text.rfind("Open MPI", 0) == 0) {
    // "Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023"
    lib.id = "openmpi";
    lib.name = "Open MPI";
    lib.version = find(text, R"(^Open MPI v([0-9][0-9A-Za-z.]*))");
  } else if (text.rfind("Intel(R) MPI Library", 0) == 0) {
    lib.id = "intel-mpi";
    lib.name = "Intel MPI";
    lib.version = find(text, R"(^Intel\(R\) MPI Library ([0-9][0-9A-Za-z.]*))");
  } else if (text.rfind("MPICH", 0) == 0) {
    // "MPICH Version:      4.0.2" (4.x), "MPICH Version:\t3.3.2" (3.x)
    lib.id = "mpich";
    lib.name = "MPICH";
    lib.version = find(text, R"(^MPICH Version:\s*([0-9][0-9A-Za-z.]*))");
  } else {
    lib.id = "unknown";
    lib.name = find(lib.version_text, R"(^\s*(\S+))");
    if (lib.name.empty()) lib.name = "unknown MPI";
  }
  return lib;
}

}  // namespace commatlas
