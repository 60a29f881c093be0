// libFuzzer target: the engine's command line (core/arguments.cpp). The input is split into
// argv words at NUL bytes, so the fuzzer can build flag/value sequences. Any input must end in
// parsed Args or a UsageError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/arguments.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words{"commatlas-engine"};
  std::string word;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  words.push_back(word);
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  try {
    (void)commatlas::parse_args(static_cast<int>(argv.size()), argv.data());
  } catch (const commatlas::UsageError&) {
  }
  return 0;
}
