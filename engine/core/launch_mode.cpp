#include "core/launch_mode.h"

#include "core/error.h"

namespace commatlas {

const char* to_string(OpLaunch mode) {
  switch (mode) {
    case OpLaunch::LaunchIncluded: return "launch_included";
    case OpLaunch::BackToBack: return "back_to_back";
    case OpLaunch::Graph: return "graph";
    case OpLaunch::Persistent: return "persistent";
  }
  return "unknown";
}

OpLaunch op_launch_from(const std::string& text, std::initializer_list<OpLaunch> allowed) {
  std::string names;
  for (OpLaunch m : allowed) {
    if (text == to_string(m)) return m;
    names += std::string(names.empty() ? "" : ", ") + to_string(m);
  }
  throw UsageError("unknown launch_mode '" + text + "' (" + names + ")");
}

}  // namespace commatlas
