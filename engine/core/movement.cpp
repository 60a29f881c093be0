#include "core/movement.h"

namespace commatlas {
namespace {

#define COMMATLAS_NAME_CASE(name, text, meaning) \
  case Enum::name:                               \
    return text;
#define COMMATLAS_VOCAB_ROW(name, text, meaning) {text, meaning},

}  // namespace

std::string to_string(Operation v) {
  using Enum = Operation;
  switch (v) { COMMATLAS_OPERATIONS(COMMATLAS_NAME_CASE) }
  return "unknown";
}
std::string to_string(MoveDirection v) {
  using Enum = MoveDirection;
  switch (v) { COMMATLAS_DIRECTIONS(COMMATLAS_NAME_CASE) }
  return "unknown";
}
std::string to_string(Mechanism v) {
  using Enum = Mechanism;
  switch (v) { COMMATLAS_MECHANISMS(COMMATLAS_NAME_CASE) }
  return "unknown";
}
std::string to_string(Memory v) {
  using Enum = Memory;
  switch (v) { COMMATLAS_MEMORIES(COMMATLAS_NAME_CASE) }
  return "unknown";
}

std::vector<VocabularyEntry> operation_vocabulary() { return {COMMATLAS_OPERATIONS(COMMATLAS_VOCAB_ROW)}; }
std::vector<VocabularyEntry> direction_vocabulary() { return {COMMATLAS_DIRECTIONS(COMMATLAS_VOCAB_ROW)}; }
std::vector<VocabularyEntry> mechanism_vocabulary() { return {COMMATLAS_MECHANISMS(COMMATLAS_VOCAB_ROW)}; }
std::vector<VocabularyEntry> memory_vocabulary() { return {COMMATLAS_MEMORIES(COMMATLAS_VOCAB_ROW)}; }

#undef COMMATLAS_NAME_CASE
#undef COMMATLAS_VOCAB_ROW

}  // namespace commatlas
