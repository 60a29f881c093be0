// Parameters of one benchmark variant (allocator, threads, direction, devices, ...), kept in
// declaration order so that records and listings read the same way every time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace commatlas {

using ParamValue = std::variant<std::int64_t, double, bool, std::string>;

class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, ParamValue>> init) : entries_(init) {}

  Params& set(const std::string& key, ParamValue value);
  bool has(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  std::string text(const std::string& key) const;
  bool flag(const std::string& key) const;
  const std::vector<std::pair<std::string, ParamValue>>& entries() const { return entries_; }

  // "threads=4 src_numa=0" for logs and the summary table.
  std::string describe() const;

 private:
  const ParamValue* find(const std::string& key) const;
  std::vector<std::pair<std::string, ParamValue>> entries_;
};

}  // namespace commatlas
