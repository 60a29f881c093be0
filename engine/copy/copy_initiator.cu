#include "copy/copy_initiator.h"

#include <stdexcept>
#include <utility>

namespace commatlas::cuda {

CopyInitiators& CopyInitiators::instance() {
  static CopyInitiators initiators;
  return initiators;
}

bool CopyInitiators::add(InitiatorPtr initiator) {
  if (find(initiator->name())) throw std::logic_error("copy initiator registered twice: " + initiator->name());
  initiators_.push_back(initiator);
  for (const auto& listener : listeners_) listener(initiator);
  return true;
}

void CopyInitiators::listen(std::function<void(const InitiatorPtr&)> listener) {
  for (const InitiatorPtr& initiator : initiators_) listener(initiator);
  listeners_.push_back(std::move(listener));
}

InitiatorPtr CopyInitiators::find(const std::string& name) const {
  for (const InitiatorPtr& initiator : initiators_)
    if (initiator->name() == name) return initiator;
  return nullptr;
}

}  // namespace commatlas::cuda
