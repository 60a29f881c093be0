#include "core/params.h"

#include <sstream>
#include <stdexcept>

namespace commatlas {

Params& Params::set(const std::string& key, ParamValue value) {
  for (auto& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return *this;
    }
  }
  entries_.emplace_back(key, std::move(value));
  return *this;
}

const ParamValue* Params::find(const std::string& key) const {
  for (const auto& entry : entries_)
    if (entry.first == key) return &entry.second;
  return nullptr;
}

bool Params::has(const std::string& key) const { return find(key) != nullptr; }

std::int64_t Params::integer(const std::string& key) const {
  const ParamValue* v = find(key);
  if (!v || !std::holds_alternative<std::int64_t>(*v))
    throw std::logic_error("benchmark parameter '" + key + "' is not an integer");
  return std::get<std::int64_t>(*v);
}

std::string Params::text(const std::string& key) const {
  const ParamValue* v = find(key);
  if (!v || !std::holds_alternative<std::string>(*v))
    throw std::logic_error("benchmark parameter '" + key + "' is not a string");
  return std::get<std::string>(*v);
}

bool Params::flag(const std::string& key) const {
  const ParamValue* v = find(key);
  if (!v || !std::holds_alternative<bool>(*v))
    throw std::logic_error("benchmark parameter '" + key + "' is not a flag");
  return std::get<bool>(*v);
}

std::string Params::describe() const {
  std::ostringstream out;
  bool first = true;
  for (const auto& [key, value] : entries_) {
    if (!first) out << ' ';
    first = false;
    out << key << '=';
    std::visit(
        [&out](const auto& x) {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, bool>)
            out << (x ? "yes" : "no");
          else
            out << x;
        },
        value);
  }
  return out.str();
}

}  // namespace commatlas
