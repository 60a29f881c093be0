// A small streaming JSON writer: the engine only ever writes JSON (Python reads it), so a
// full JSON library would be weight without use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.h"

namespace commatlas {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(double v);  // non-finite values become null: JSON has no NaN
  // Fixed-point, for values whose absolute resolution matters (timestamps): %.9g would round a
  // Unix time to 10 s.
  JsonWriter& fixed(double v, int decimals);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  JsonWriter& value(const ParamValue& v);
  JsonWriter& value(const std::vector<double>& v);

  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // Raw, already-serialised JSON (e.g. an object produced by another writer).
  JsonWriter& raw(std::string_view json);

  const std::string& str() const { return out_; }

 private:
  void separate();
  std::string out_;
  // One entry per open container: true once it holds an element (so the next needs a comma).
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

std::string json_escape(std::string_view s);

}  // namespace commatlas
