// libFuzzer target: parse_size_list on arbitrary text. Any input must end in a size list or a
// UsageError; anything else (another exception, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/sizes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto sizes = commatlas::parse_size_list(text);
    // The documented contract: sorted, no duplicates, no zero, not more than the cap.
    if (sizes.empty() || sizes.size() > 4096 || sizes.front() == 0) __builtin_trap();
    for (std::size_t i = 1; i < sizes.size(); ++i)
      if (sizes[i - 1] >= sizes[i]) __builtin_trap();
    for (std::uint64_t s : sizes) (void)commatlas::format_size(s);
  } catch (const commatlas::UsageError&) {
  }
  return 0;
}
