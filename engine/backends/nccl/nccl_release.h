// NCCL's release as people write it, from the integer NCCL_VERSION_CODE and ncclGetVersion give.
// Pure C++ (no nccl.h), so code that only words a version needs no NCCL to build.
#pragma once

#include <string>

namespace commatlas::nccl {

// "2.28.9" from 22809: NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch, older releases
// major * 1000 + minor * 100 + patch (2.7.8 is 2708).
inline std::string release_text(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

}  // namespace commatlas::nccl
