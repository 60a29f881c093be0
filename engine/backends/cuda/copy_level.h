// The level of a process's small synchronous copies: a witness of a state of the machine.
// An 8 B cudaMemcpy to or from the GPU runs at one of a few levels, 0.7-1.6 us apart (2x H200:
// between 7.3 and 9.7 us a copy), which a process may keep for its life or leave, whatever ran before.
// GPU-aware MPI moves a small device message with such copies, and over 24 fresh 2-rank jobs
// osu_bw's 8 B window read 287-312 us wherever the receiving rank copied at the faster level and
// 410-475 us wherever at the slower (results/nvidia-h200-x2/gpu-aware-witness). Timed beside a
// measurement, the level lets a comparison of two jobs say why their figures moved.
#pragma once

#include "backends/cuda/memory.h"

namespace commatlas::cuda {

class CopyLevel {
 public:
  explicit CopyLevel(int device);
  // Microseconds per 8 B synchronous copy, median over kBatches batches that each alternate
  // kCopies copies device -> host and host -> device (pinned host memory), after one untimed batch.
  double measure();

  static constexpr int kBatches = 5;
  static constexpr int kCopies = 10;

 private:
  int device_;
  GpuBuffer host_, device_buffer_;
};

}  // namespace commatlas::cuda
