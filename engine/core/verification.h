// How a result's bytes were proved, and the test-only switch that plants a move that does nothing.
//
// A data check only means something if the timed operations had to produce what it finds. The
// probe and the warm-up run the same operations untimed, so a destination filled once at setup
// would hold the right bytes even if every timed operation did nothing. Each workload therefore
// makes its destination wrong again before each timed batch (Workload::prepare_batch, called by
// the harness outside the timed window), and the check after the last batch finds the bytes only
// that batch could have written. Precision-driven stopping decides which batch is the last while
// sampling, so every batch is prepared as if it were.
//
// The methods are a closed vocabulary (X-macro table: record name, meaning); the schema's enum of
// `verified.method` and the table in docs/results-format.md list the same names.
#pragma once

#include <string>
#include <vector>

#include "core/movement.h"

namespace commatlas {

// clang-format off
#define COMMATLAS_VERIFY_METHODS(X)                                                                 \
  X(Bytes,     "bytes",     "the destination was poisoned before each timed batch and holds the "  \
                            "source's pattern (or the exact collective result) after the last")     \
  X(BytesOnce, "bytes_once", "the destination was poisoned once, before the warm-up, and holds the "  \
                            "source's bytes after the timed loop: the OSU-method reference keeps "  \
                            "OSU's loops untouched, so it proves the messages arrived, not that "   \
                            "the timed ones did (commatlas-osu-ref, through `ingest`)")             \
  X(Sum,       "sum",       "every timed read added the buffer's words into a running sum, which " \
                            "must equal the pattern's sum times the reads (STREAM read)")           \
  X(Chain,     "chain",     "the chase ended on the link that walking the chain for every timed "  \
                            "and untimed step predicts (pointer chase)")                            \
  X(Unchanged, "unchanged", "the buffer still holds its pattern: a prefetch moves pages, never "   \
                            "their contents, so there is no destination to poison (prefetch)")     \
  X(Replicas,  "replicas",  "every rank's parameters are equal after the timed training steps, "  \
                            "while each rank trained on its own tokens: only the gradient "       \
                            "all-reduce makes them so (torch suite's DDP step)")                  \
  X(None,      "none",      "nothing moves, nothing to check (harness overhead; the DDP step "     \
                            "under no_sync, the baseline without gradient all-reduce)")
// clang-format on

#define COMMATLAS_ENUM_ENTRY(name, text, meaning) name,
enum class VerifyMethod { COMMATLAS_VERIFY_METHODS(COMMATLAS_ENUM_ENTRY) };
#undef COMMATLAS_ENUM_ENTRY

std::string to_string(VerifyMethod v);
std::vector<VocabularyEntry> verify_method_vocabulary();

// COMMATLAS_TEST_SKIP_MOVE=1 (test-only): the real memcpy, GPU copy, IPC copy, NCCL and MPI calls
// do nothing inside timed batches (Workload::planted_no_move). Every point that moves bytes must
// then end as an error record, never a bandwidth: tests and scripts/device/planted_noop.sh prove
// it. Read once, at the first call (main calls it at start).
bool test_skip_move();

// COMMATLAS_TEST_SHARE_GPU=1 (test-only): CUDA IPC pairs two ranks on one GPU and single-process
// NCCL runs a one-GPU communicator, so the planted no-op of those paths can be checked on a
// one-GPU machine (scripts/device/planted_noop.sh). Not a measurement anyone should quote: a
// shared GPU's IPC copy is a local copy, a one-rank collective a local copy or nothing.
bool test_share_gpu();

}  // namespace commatlas
