#include "backends/host/memcpy_workload.h"

#include <algorithm>
#include <cstring>

#include "core/harness.h"
#include "core/sizes.h"

namespace commatlas::host {

MemcpySetup memcpy_setup(const Context& ctx, const Params& params, std::uint64_t bytes) {
  MemcpySetup setup;
  setup.bytes = bytes;
  setup.threads = static_cast<int>(params.integer("threads"));
  if (params.has("min_chunk_bytes")) setup.min_chunk_bytes = static_cast<std::size_t>(params.integer("min_chunk_bytes"));
  if (params.has("src_numa")) setup.src_node = static_cast<int>(params.integer("src_numa"));
  if (params.has("dst_numa")) setup.dst_node = static_cast<int>(params.integer("dst_numa"));
  setup.seed = ctx.options.seed;
  return setup;
}

MemcpyWorkload::MemcpyWorkload(const MemcpySetup& setup)
    : setup_(setup),
      buffers_(setup.bytes, setup.src_node, setup.dst_node, setup.seed),
      cpus_(setup.src_node && buffers_.placement() == NumaPlacement::Libnuma ? cpus_of_node(*setup.src_node)
                                                                              : std::vector<int>{}) {
  caller_cpus_ = setup_.threads > 1 ? WorkerPool::caller_binding(cpus_) : cpus_;
  if (setup_.threads > 1) {
    pool_ = std::make_unique<WorkerPool>(setup_.threads, cpus_);
    plan_ = plan_chunks(buffers_.size(), setup_.threads, setup_.min_chunk_bytes);
    chunk_copy_ = [this](std::size_t k, int) {
      const Chunk c = plan_.at(k);
      std::memcpy(buffers_.destination() + c.begin, buffers_.source() + c.begin, c.length);
    };
    chunk_poison_ = [this](std::size_t k, int) {
      const Chunk c = plan_.at(k);
      buffers_.poison(c.begin, c.length);
    };
  }
}

Accounting MemcpyWorkload::accounting() const {
  Accounting a;
  a.bytes_per_op = static_cast<double>(setup_.bytes);
  if (setup_.threads > 1) {
    // threads=N is a ceiling: chunks of at least min_chunk_bytes, one thread at most per chunk.
    const std::string release = "host steady_clock around a batch of operations; each releases up to " +
                                std::to_string(setup_.threads) +
                                " already-running threads (caller included, each pinned to one CPU where the node is "
                                "known) that claim chunks of at least " + format_size(setup_.min_chunk_bytes) +
                                " as they come free and memcpy them, and ends when the last chunk is copied, without "
                                "waiting for threads that found none; ";
    if (plan_.count <= 1) {
      a.timing = release + "here the whole buffer is one chunk, copied by the caller alone, nobody released";
      a.latency_includes = "one libc memcpy call on the calling thread (a buffer of one chunk is not shared)";
    } else {
      const std::size_t sharing = std::min(plan_.count, static_cast<std::size_t>(setup_.threads));
      a.timing = release + "here " + std::to_string(plan_.count) + " chunks of " + format_size(plan_.size) +
                 ", so up to " + std::to_string(sharing) + " threads";
      a.latency_includes = "one memcpy of the whole buffer shared in chunks by up to " + std::to_string(sharing) +
                           " threads, including their release and the wait for the last chunk";
    }
  } else {
    a.timing = "host steady_clock around a batch of memcpy calls on one thread";
    a.latency_includes = "one libc memcpy call";
  }
  // The DRAM peak is the movement's (topology/movement_peak.cpp, from the SMBIOS tables).
  return a;
}

void MemcpyWorkload::prepare_batch() {
  // The destination is poisoned by the copying threads, in the copy's chunks, on the copying node:
  // its lines sit in the caches they sit in after the warm-up, so the first timed copy finds what
  // the others do.
  const ScopedCpuBinding on_source_node(caller_cpus_);
  if (pool_) {
    pool_->run(plan_.count, chunk_poison_);
  } else {
    buffers_.poison();
  }
}

void MemcpyWorkload::copy_once() {
  if (planted_no_move()) return;  // test-only (COMMATLAS_TEST_SKIP_MOVE): the check must fail
  if (pool_) {
    pool_->run(plan_.count, chunk_copy_);
  } else {
    std::memcpy(buffers_.destination(), buffers_.source(), buffers_.size());
  }
  // The destination is read only after the timed loop: keep the compiler from merging repeats.
  asm volatile("" ::: "memory");
}

bool MemcpyWorkload::resize(std::uint64_t bytes) {
  buffers_.resize(bytes);
  setup_.bytes = bytes;
  if (pool_) plan_ = plan_chunks(buffers_.size(), setup_.threads, setup_.min_chunk_bytes);
  return true;
}

void MemcpyWorkload::run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) {
  const ScopedCpuBinding on_source_node(caller_cpus_);
  time_host_samples(samples, ops_per_sample, seconds, [this] { copy_once(); });
}

}  // namespace commatlas::host
