// What `commatlas-engine info` says about the NCCL backend: the library version actually loaded
// (it can differ from the nccl.h we compiled against when another libnccl is found first).
#include <nccl.h>

#include "core/backend.h"

namespace commatlas::nccl {
namespace {

// NCCL >= 2.9 encodes 2.28.3 as 22803; older releases as 2803.
std::string nccl_version_text(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

class NcclProbe : public BackendProbe {
 public:
  std::string name() const override { return "nccl"; }

  void describe(JsonWriter& out) const override {
    int code = 0;
    const ncclResult_t rc = ncclGetVersion(&code);
    if (rc != ncclSuccess) {
      out.field("error", std::string("ncclGetVersion failed: ") + ncclGetErrorString(rc));
      return;
    }
    out.field("version", nccl_version_text(code));
    out.field("header_version", nccl_version_text(NCCL_VERSION_CODE));
  }
};

}  // namespace
}  // namespace commatlas::nccl

COMMATLAS_REGISTER_BACKEND(commatlas::nccl::NcclProbe);
