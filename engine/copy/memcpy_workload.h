// host.memcpy's workload: libc memcpy from 1 or N threads between two placed host buffers.
// Declared here (not inside the benchmark file) so tests can reach the destination and prove
// that a corrupted copy fails the data check.
#pragma once

#include <memory>
#include <optional>

#include "backends/host/copy_buffers.h"
#include "backends/host/worker_pool.h"
#include "core/benchmark.h"
#include "core/context.h"

namespace commatlas::host {

struct MemcpySetup {
  std::size_t bytes = 0;
  int threads = 1;
  std::optional<int> src_node;  // nullopt: unplaced
  std::optional<int> dst_node;
  std::uint64_t seed = 1;
};
// host.memcpy's setup of a variant (`threads`, and `src_numa`/`dst_numa` where placed), shared
// with reference.host_memcpy so both build the same operation from the same parameters.
MemcpySetup memcpy_setup(const Context& ctx, const Params& params, std::uint64_t bytes);

class MemcpyWorkload final : public Workload {
 public:
  explicit MemcpyWorkload(const MemcpySetup& setup);
  Accounting accounting() const override;
  void run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) override;
  Verification verify() override { return buffers_.verify(); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override;
  CopyBuffers& buffers() { return buffers_; }

  // One operation, as run() times it: public for reference.host_memcpy, which times this same
  // operation (buffers, threads, placement, poisoning) from its own bare loop. Call it on the
  // CPUs of caller_cpus().
  void copy_once();
  const std::vector<int>& caller_cpus() const { return caller_cpus_; }

 private:
  void prepare_batch() override;

  MemcpySetup setup_;
  CopyBuffers buffers_;
  std::vector<int> cpus_;  // where the copying threads run: the source's node
  std::vector<int> caller_cpus_;  // the caller's part: the whole node alone, its first CPU with a pool
  std::unique_ptr<WorkerPool> pool_;  // only with more than one thread
  WorkerPool::Task chunk_copy_;
  WorkerPool::Task chunk_poison_;
};

}  // namespace commatlas::host
