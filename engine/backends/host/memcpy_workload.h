// host.memcpy's workload: libc memcpy from 1 or N threads between two placed host buffers.
// Declared here (not inside the benchmark file) so tests can reach the destination and prove
// that a corrupted copy fails the data check.
#pragma once

#include <memory>
#include <optional>

#include "backends/host/copy_buffers.h"
#include "backends/host/worker_pool.h"
#include "core/benchmark.h"

namespace commatlas::host {

struct MemcpySetup {
  std::size_t bytes = 0;
  int threads = 1;
  std::optional<int> src_node;  // nullopt: unplaced
  std::optional<int> dst_node;
  std::uint64_t seed = 1;
};

class MemcpyWorkload final : public Workload {
 public:
  explicit MemcpyWorkload(const MemcpySetup& setup);
  Accounting accounting() const override;
  void run(std::int64_t samples, std::int64_t ops_per_sample, std::vector<double>& seconds) override;
  Verification verify() override { return buffers_.verify(); }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }

  bool resize(std::uint64_t bytes) override;
  CopyBuffers& buffers() { return buffers_; }

 private:
  void prepare_batch() override;
  void copy_once();

  MemcpySetup setup_;
  CopyBuffers buffers_;
  std::vector<int> cpus_;  // where the copying threads run: the source's node
  std::unique_ptr<WorkerPool> pool_;  // only with more than one thread
  WorkerPool::Task chunk_copy_;
  WorkerPool::Task chunk_poison_;
};

}  // namespace commatlas::host
