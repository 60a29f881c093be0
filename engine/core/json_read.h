// A small JSON reader for the one place the engine reads JSON: `commatlas-engine ingest`, which
// turns measurements taken outside the engine into records (core/ingest.h). Objects keep their
// members in the order written, so params stay in declaration order like the engine's own.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commatlas {

class JsonParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  bool integral = false;        // a number written without fraction or exponent that fits int64
  std::int64_t integer = 0;     // its value, when integral
  std::string text;             // strings
  std::vector<JsonValue> items;                              // arrays
  std::vector<std::pair<std::string, JsonValue>> members;    // objects, in the order written

  bool is(Kind k) const { return kind == k; }
  // The member `key` of an object, or null when absent (or when this is not an object).
  const JsonValue* get(std::string_view key) const;
};

// One JSON text (surrounding whitespace allowed); throws JsonParseError saying where it broke.
JsonValue parse_json(std::string_view text);

}  // namespace commatlas
