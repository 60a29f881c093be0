#include "copy/memcpy_workload.h"

#include <cstring>

#include "core/harness.h"

namespace commatlas::host {

MemcpySetup memcpy_setup(const Context& ctx, const Params& params, std::uint64_t bytes) {
  MemcpySetup setup;
  setup.bytes = bytes;
  setup.threads = static_cast<int>(params.integer("threads"));
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
    chunk_copy_ = [this](int index) {
      const Chunk c = chunk_of(buffers_.size(), setup_.threads, index);
      if (c.length) std::memcpy(buffers_.destination() + c.begin, buffers_.source() + c.begin, c.length);
    };
    chunk_poison_ = [this](int index) {
      const Chunk c = chunk_of(buffers_.size(), setup_.threads, index);
      if (c.length) buffers_.poison(c.begin, c.length);
    };
  }
}

Accounting MemcpyWorkload::accounting() const {
  Accounting a;
  a.bytes_per_op = static_cast<double>(setup_.bytes);
  a.timing = setup_.threads > 1
                 ? "host steady_clock around a batch of operations; each releases " + std::to_string(setup_.threads) +
                       " already-running threads (caller included, each pinned to one CPU where the node is known) "
                       "that memcpy contiguous 64-byte-aligned chunks, one each, and ends when the last chunk is "
                       "copied; below threads x 64 B only the threads with a chunk take part"
                 : "host steady_clock around a batch of memcpy calls on one thread";
  // The threads that copy at this size, named: a 16-byte copy "over 32 threads" is one thread's.
  const int copying = chunks_with_bytes(setup_.bytes, setup_.threads);
  a.latency_includes = setup_.threads > 1
                           ? "one memcpy of the whole buffer split over " + std::to_string(copying) + " of the " +
                                 std::to_string(setup_.threads) +
                                 " threads (one 64-byte-aligned chunk each), including their release and join"
                           : "one libc memcpy call";
  // The DRAM peak is the movement's (topology/movement_peak.cpp, from the SMBIOS tables).
  return a;
}

void MemcpyWorkload::prepare_batch() {
  // Each chunk is poisoned by the thread that copies it, on the copying node: the destination's
  // lines sit in the same caches as after the warm-up, so the first timed copy finds what the
  // others do.
  const ScopedCpuBinding on_source_node(caller_cpus_);
  if (pool_) {
    pool_->run(chunk_poison_, chunks_with_bytes(buffers_.size(), setup_.threads));
  } else {
    buffers_.poison();
  }
}

void MemcpyWorkload::copy_once() {
  if (planted_no_move()) return;  // test-only (COMMATLAS_TEST_SKIP_MOVE): the check must fail
  if (pool_) {
    pool_->run(chunk_copy_, chunks_with_bytes(buffers_.size(), setup_.threads));
  } else {
    std::memcpy(buffers_.destination(), buffers_.source(), buffers_.size());
  }
  // The destination is read only after the timed loop: keep the compiler from merging repeats.
  asm volatile("" ::: "memory");
}

bool MemcpyWorkload::resize(std::uint64_t bytes) {
  buffers_.resize(bytes);
  setup_.bytes = bytes;
  return true;
}

void MemcpyWorkload::run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) {
  const ScopedCpuBinding on_source_node(caller_cpus_);
  time_host_samples(samples, ops_per_sample, seconds, [this] { copy_once(); });
}

}  // namespace commatlas::host
