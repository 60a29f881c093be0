#include "core/backend.h"

namespace commatlas {

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;
  return registry;
}

bool BackendRegistry::add(std::unique_ptr<BackendProbe> probe) {
  probes_.push_back(std::move(probe));
  return true;
}

}  // namespace commatlas
