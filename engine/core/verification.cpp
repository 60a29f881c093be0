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

namespace {
bool flag_set(const char* name) {
  const char* flag = std::getenv(name);
  return flag && std::strcmp(flag, "1") == 0;
}
}  // namespace

bool test_skip_move() {
  static const bool skip = flag_set("COMMATLAS_TEST_SKIP_MOVE");
  return skip;
}

bool test_share_gpu() {
  static const bool share = flag_set("COMMATLAS_TEST_SHARE_GPU");
  return share;
}

}  // namespace commatlas
