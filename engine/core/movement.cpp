#include "core/movement.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace commatlas {
namespace {

std::vector<std::string> words(const char* text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* c = text;; ++c) {
    if (*c == ' ' || *c == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*c == '\0') break;
    } else {
      cur += *c;
    }
  }
  return out;
}

}  // namespace

std::string to_string(Operation v) {
#define COMMATLAS_CASE(name, text, ...) \
  case Operation::name:                 \
    return text;
  switch (v) { COMMATLAS_OPERATIONS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}
std::string to_string(OperationKind v) {
#define COMMATLAS_CASE(name, text, ...) \
  case OperationKind::name:             \
    return text;
  switch (v) { COMMATLAS_OPERATION_KINDS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}
std::string to_string(MoveDirection v) {
#define COMMATLAS_CASE(name, text, ...) \
  case MoveDirection::name:             \
    return text;
  switch (v) { COMMATLAS_DIRECTIONS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}
std::string to_string(Mechanism v) {
#define COMMATLAS_CASE(name, text, ...) \
  case Mechanism::name:                 \
    return text;
  switch (v) { COMMATLAS_MECHANISMS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}
std::string to_string(Memory v) {
#define COMMATLAS_CASE(name, text, ...) \
  case Memory::name:                    \
    return text;
  switch (v) { COMMATLAS_MEMORIES(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}

std::string to_string(Allocator v) {
#define COMMATLAS_CASE(name, text, ...) \
  case Allocator::name:                 \
    return text;
  switch (v) { COMMATLAS_ALLOCATORS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}

OperationKind kind_of(Operation op) {
#define COMMATLAS_CASE(name, text, kind, ...) \
  case Operation::name:                       \
    return OperationKind::kind;
  switch (op) { COMMATLAS_OPERATIONS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return OperationKind::None;
}

std::string participants_of(OperationKind kind) {
#define COMMATLAS_CASE(name, text, participants, ...) \
  case OperationKind::name:                           \
    return participants;
  switch (kind) { COMMATLAS_OPERATION_KINDS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "none";
}

bool direction_allowed(Operation op, MoveDirection d) {
  const char* allowed = "";
#define COMMATLAS_CASE(name, text, kind, directions, ...) \
  case Operation::name:                                   \
    allowed = directions;                                 \
    break;
  switch (op) { COMMATLAS_OPERATIONS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  for (const std::string& w : words(allowed))
    if (w == to_string(d)) return true;
  return false;
}

std::string interface_of(Mechanism m) {
#define COMMATLAS_CASE(name, text, interface, ...) \
  case Mechanism::name:                            \
    return interface;
  switch (m) { COMMATLAS_MECHANISMS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return "unknown";
}

std::string interface_of(const Movement& m) { return m.reference_of.empty() ? interface_of(m.mechanism) : "harness"; }

std::vector<VocabularyEntry> operation_vocabulary() {
#define COMMATLAS_ROW(name, text, kind, directions, meaning) \
  {text, meaning, {{"kind", to_string(OperationKind::kind)}, {"participants", participants_of(OperationKind::kind)}}, words(directions)},
  return {COMMATLAS_OPERATIONS(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}
std::vector<VocabularyEntry> operation_kind_vocabulary() {
#define COMMATLAS_ROW(name, text, participants, meaning) {text, meaning, {{"participants", participants}}, {}},
  return {COMMATLAS_OPERATION_KINDS(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}
std::vector<VocabularyEntry> direction_vocabulary() {
#define COMMATLAS_ROW(name, text, meaning) {text, meaning, {}, {}},
  return {COMMATLAS_DIRECTIONS(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}
std::vector<VocabularyEntry> mechanism_vocabulary() {
#define COMMATLAS_ROW(name, text, interface, display, colour, meaning) \
  {text, meaning, {{"interface", interface}, {"display", display}, {"colour", colour}}, {}},
  return {COMMATLAS_MECHANISMS(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}
std::vector<VocabularyEntry> memory_vocabulary() {
#define COMMATLAS_ROW(name, text, meaning) {text, meaning, {}, {}},
  return {COMMATLAS_MEMORIES(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}
std::vector<VocabularyEntry> allocator_vocabulary() {
#define COMMATLAS_ROW(name, text, memory, meaning) {text, meaning, {{"memory", memory}}, {}},
  return {COMMATLAS_ALLOCATORS(COMMATLAS_ROW)};
#undef COMMATLAS_ROW
}

std::vector<VocabularyEntry> param_vocabulary() {
  std::vector<VocabularyEntry> out;
  for (const ConsumedParam& c : consumed_params()) out.push_back({c.key, c.becomes, {}, {}});
  return out;
}

bool allocator_allowed(const std::string& allocator, Memory memory) {
  const std::optional<Allocator> a = allocator_named(allocator);
  if (!a) return false;
  const std::optional<Memory> where = memory_of(*a);
  return !where || *where == memory;
}

std::optional<Allocator> allocator_named(const std::string& name) {
#define COMMATLAS_CHECK(value, text, ...) \
  if (name == text) return Allocator::value;
  COMMATLAS_ALLOCATORS(COMMATLAS_CHECK)
#undef COMMATLAS_CHECK
  return std::nullopt;
}

Allocator parse_allocator(const std::string& name) {
  if (const std::optional<Allocator> a = allocator_named(name)) return *a;
  std::string known;
#define COMMATLAS_NAME(value, text, ...) known += (known.empty() ? "" : ", ") + std::string(text);
  COMMATLAS_ALLOCATORS(COMMATLAS_NAME)
#undef COMMATLAS_NAME
  throw UsageError("unknown allocator '" + name + "' (" + known + ")");
}

std::optional<Memory> memory_of(Allocator allocator) {
#define COMMATLAS_CASE(value, text, where, meaning)          \
  case Allocator::value:                                     \
    if (std::string(where) == "either") return std::nullopt; \
    return std::string(where) == "host" ? Memory::Host : Memory::Gpu;
  switch (allocator) { COMMATLAS_ALLOCATORS(COMMATLAS_CASE) }
#undef COMMATLAS_CASE
  return std::nullopt;
}

Endpoint host_memory(std::optional<int> numa, Allocator allocator, std::string first_touch) {
  Endpoint e;
  e.memory = Memory::Host;
  e.numa = numa;
  e.allocator = to_string(allocator);
  e.first_touch = std::move(first_touch);
  return e;
}

Endpoint gpu_memory(std::optional<int> gpu, Allocator allocator, std::string first_touch) {
  Endpoint e;
  e.memory = Memory::Gpu;
  e.gpu = gpu;
  e.allocator = to_string(allocator);
  e.first_touch = std::move(first_touch);
  return e;
}

Endpoint cpu_processor(std::optional<int> numa) {
  Endpoint e;
  e.memory = Memory::Host;
  e.numa = numa;
  e.processor = true;
  return e;
}

Endpoint gpu_processor(std::optional<int> gpu) {
  Endpoint e;
  e.memory = Memory::Gpu;
  e.gpu = gpu;
  e.processor = true;
  return e;
}

Endpoint no_memory() {
  Endpoint e;
  e.memory = Memory::None;
  return e;
}

Movement movement_between(Operation op, MoveDirection direction, Mechanism mechanism, Endpoint from, Endpoint to,
                          const Params& params, std::initializer_list<const char*> choice_keys) {
  Movement m = movement_of_benchmark(op, direction, mechanism);
  m.from = std::move(from);
  m.to = std::move(to);
  keep_choices(m, params, choice_keys);
  return m;
}

void keep_choices(Movement& m, const Params& params, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    for (const auto& [k, v] : params.entries())
      if (k == key) m.choices.set(k, v);
}

Movement movement_of_benchmark(Operation op, MoveDirection direction, Mechanism mechanism) {
  Movement m;
  m.operation = op;
  m.direction = direction;
  m.mechanism = mechanism;
  return m;
}

int list_length(const std::string& list) {
  if (list.empty()) return 0;
  return 1 + static_cast<int>(std::count(list.begin(), list.end(), ','));
}

std::optional<int> gpu_of_rank(const Params& params, int rank) {
  if (!params.has("gpus")) return std::nullopt;
  const std::string list = params.text("gpus");
  int index = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (index == rank) {
      const std::string item = list.substr(start, comma - start);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      return std::stoi(item);
    }
    ++index;
    start = comma + 1;
  }
  return std::nullopt;
}

// One name per idea, each meaning one line of `vocabulary` (80 columns); docs/results-format.md
// repeats the table (tests/test_vocabulary.py).
const std::vector<ConsumedParam>& consumed_params() {
  static const std::vector<ConsumedParam> table = {
      {"path", "h2d/d2h/d2d/peer: which endpoint is host and which GPU memory"},
      {"direction", "the direction (uni, bi, half_round_trip)"},
      {"allocator", "allocator of every buffer (messages, kernel arrays, prefetched pages)"},
      {"host_allocator", "allocator of a copy's host-side endpoint"},
      {"device_allocator", "allocator of a copy's GPU-memory endpoints"},
      {"first_touch", "first_touch of the endpoint; with managed memory also where its pages are"},
      {"src_gpu", "from.gpu"},
      {"dst_gpu", "to.gpu"},
      {"gpu", "the processor's gpu, `by`'s (stream copy), the GPU memory's (prefetch)"},
      {"memory_gpu", "gpu of the memory endpoint (the running GPU's own, or its peer's)"},
      {"chaser", "the processor endpoint: the GPU's SMs or a CPU core"},
      {"src_numa", "from.numa"},
      {"dst_numa", "to.numa"},
      {"mem_numa", "numa of the memory endpoint"},
      {"cpu_numa", "numa of the CPU processor endpoint"},
      {"numa_placement", "none: buffers are not placed, so every numa is null"},
      {"fan", "the direction (one_to_all, all_to_one)"},
      {"root_gpu", "gpu of the root endpoint (from for one_to_all, to for all_to_one)"},
      {"gpus", "the endpoints' GPUs; collectives: how many take part (participants)"},
      {"engine", "the mechanism (cuda_ipc_ce, cuda_ipc_sm)"},
  };
  return table;
}

}  // namespace commatlas
