#include "core/verification.h"

#include <cstdlib>
#include <cstring>

namespace commatlas {

std::string to_string(VerifyMethod v) {
#define COMMATLAS_NAME_CASE(name, text, meaning) \
  case VerifyMethod::name:                       \
    return text;
  switch (v) { COMMATLAS_VERIFY_METHODS(COMMATLAS_NAME_CASE) }
#undef COMMATLAS_NAME_CASE
  return "unknown";
}

std::vector<VocabularyEntry> verify_method_vocabulary() {
#define COMMATLAS_VOCAB_ROW(name, text, meaning) {text, meaning},
  return {COMMATLAS_VERIFY_METHODS(COMMATLAS_VOCAB_ROW)};
#undef COMMATLAS_VOCAB_ROW
}

bool test_skip_move() {
  static const bool skip = [] {
    const char* flag = std::getenv("COMMATLAS_TEST_SKIP_MOVE");
    return flag && std::strcmp(flag, "1") == 0;
  }();
  return skip;
}

}  // namespace commatlas
