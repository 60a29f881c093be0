// The single list of every benchmark the engine was built with.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/benchmark.h"

namespace commatlas {

class Registry {
 public:
  static Registry& instance();
  bool add(std::unique_ptr<Benchmark> benchmark);
  // Sorted by key.
  std::vector<const Benchmark*> all() const;
  const Benchmark* find(const std::string& key) const;

 private:
  std::vector<std::unique_ptr<Benchmark>> benchmarks_;
};

// Glob match (`*`, `?`) of a benchmark key against one pattern.
bool key_matches(const std::string& key, const std::string& pattern);

// Benchmarks selected by suites, --only and --exclude (comma-separated glob patterns). An --only
// pattern that matches nothing, or an unknown suite, is a UsageError.
std::vector<const Benchmark*> select_benchmarks(const std::vector<std::string>& suites,
                                                const std::vector<std::string>& only,
                                                const std::vector<std::string>& exclude);

}  // namespace commatlas

#define COMMATLAS_CONCAT_INNER(a, b) a##b
#define COMMATLAS_CONCAT(a, b) COMMATLAS_CONCAT_INNER(a, b)
// Registers a benchmark at static-initialisation time: COMMATLAS_REGISTER_BENCHMARK(Type) or, for
// one class registered once per configuration, COMMATLAS_REGISTER_BENCHMARK(Type, ctor args...).
// Benchmark files are linked as objects (never from a static archive), so the registration is
// never dropped by the linker.
#define COMMATLAS_REGISTER_BENCHMARK(Type, ...)                                     \
  static const bool COMMATLAS_CONCAT(commatlas_registered_, __LINE__) =            \
      ::commatlas::Registry::instance().add(std::make_unique<Type>(__VA_ARGS__))
