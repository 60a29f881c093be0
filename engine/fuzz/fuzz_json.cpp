// libFuzzer target: the JSON reader that `commatlas-engine ingest` reads measurements with. Any
// input must end in a value or a JsonParseError; anything else (another exception, a sanitizer
// report, a stack overflow on deep nesting, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/json_read.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const commatlas::JsonValue v = commatlas::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
    (void)v.get("type");
  } catch (const commatlas::JsonParseError&) {
  }
  return 0;
}
