// What each compiled-in backend reports about itself for `info` and the run metadata
// (library versions, devices). Backends register one probe each; backends that were not built
// are named by the build with the reason (see engine/CMakeLists.txt).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/json.h"

namespace commatlas {

class BackendProbe {
 public:
  virtual ~BackendProbe() = default;
  virtual std::string name() const = 0;
  // Writes the backend's facts as fields of an already-open JSON object.
  virtual void describe(JsonWriter& out) const = 0;
  // Brings the backend's driver up in this process without taking a device (no GPU context, no
  // memory): `commatlas-engine hold` (app/main.cpp). Nothing for a backend with no driver to start.
  virtual void start_driver() const {}
};

class BackendRegistry {
 public:
  static BackendRegistry& instance();
  bool add(std::unique_ptr<BackendProbe> probe);
  const std::vector<std::unique_ptr<BackendProbe>>& all() const { return probes_; }

 private:
  std::vector<std::unique_ptr<BackendProbe>> probes_;
};

}  // namespace commatlas

#define COMMATLAS_REGISTER_BACKEND(Type)                                    \
  static const bool COMMATLAS_CONCAT(commatlas_backend_, __LINE__) =       \
      ::commatlas::BackendRegistry::instance().add(std::make_unique<Type>())

#ifndef COMMATLAS_CONCAT
#define COMMATLAS_CONCAT_INNER(a, b) a##b
#define COMMATLAS_CONCAT(a, b) COMMATLAS_CONCAT_INNER(a, b)
#endif
