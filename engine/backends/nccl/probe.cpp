// What `commatlas-engine info` says about the NCCL backend: the library version actually loaded
// (it can differ from the nccl.h we compiled against when another libnccl is found first).
#include <nccl.h>

#include "backends/nccl/nccl_release.h"
#include "core/backend.h"

namespace commatlas::nccl {
namespace {

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
    out.field("version", release_text(code));
    out.field("header_version", release_text(NCCL_VERSION_CODE));
  }
};

}  // namespace
}  // namespace commatlas::nccl

COMMATLAS_REGISTER_BACKEND(commatlas::nccl::NcclProbe);
