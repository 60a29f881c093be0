// Exploration, not part of the engine: does a GPU-aware MPI job's small-message state show in a
// plain copy of the same process? On 2x H100 and H200 a fresh job's window of 64 device messages
// of 8 B takes one of two times (about 1.4x apart) and keeps it for the whole job, whatever ran
// before; a fresh process's 8 B synchronous copy also draws one of two levels. If the two move
// together job for job, a cheap copy timed at a job's start can witness its MPI state.
// Each rank (one per GPU, 2 ranks): 8 B device->host and host->device synchronous copies (pinned),
// then osu_bw's window (64 non-blocking sends of 8 B device buffers, one reply) and osu_latency's
// ping-pong at 8 B, then the copies again. Prints one JSON line per rank.
// Build: nvcc -O2 -arch=sm_90 -std=c++17 -ccbin mpicxx gpu_aware_witness.cu -o gpu_aware_witness
// Usage:  mpiexec -n 2 gpu_aware_witness
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kWindow = 64;     // osu_bw's window
constexpr int kBytes = 8;
constexpr int kBatches = 40;    // copies: batches of kCopies, per-copy median over them
constexpr int kCopies = 50;
constexpr int kWindows = 200;   // timed windows (after 20 untimed)
constexpr int kTrips = 1000;    // timed round trips (after 100 untimed)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Per-copy microseconds, median over batches.
double copy_us(void* dst, const void* src, cudaMemcpyKind kind) {
  std::vector<double> per;
  for (int b = 0; b < kBatches; ++b) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < kCopies; ++i) CHECK(cudaMemcpy(dst, src, kBytes, kind));
    per.push_back((MPI_Wtime() - t0) * 1e6 / kCopies);
  }
  return median(per);
}

// osu_bw's loop: rank 0 sends a window, rank 1 receives it and answers with 4 bytes.
// Microseconds per window, median over the timed windows (rank 0's clock).
double window_us(int rank, char* buffer) {
  std::vector<MPI_Request> requests(kWindow);
  char ack[4];
  std::vector<double> per;
  for (int w = 0; w < kWindows + 20; ++w) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < kWindow; ++i) {
      if (rank == 0) MPI_Isend(buffer + i * kBytes, kBytes, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &requests[i]);
      else MPI_Irecv(buffer + i * kBytes, kBytes, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    if (rank == 0) MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
    if (w >= 20) per.push_back((MPI_Wtime() - t0) * 1e6);
  }
  return median(per);
}

// osu_latency's loop: half a round trip, microseconds, mean over the timed trips.
double pingpong_us(int rank, char* buffer) {
  double t0 = 0;
  for (int i = 0; i < kTrips + 100; ++i) {
    if (i == 100) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (rank == 0) {
      MPI_Send(buffer, kBytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buffer, kBytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer, kBytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, kBytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * kTrips);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "gpu_aware_witness: run it with 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  CHECK(cudaSetDevice(rank));
  char* device = nullptr;
  void* host = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&device), kWindow * kBytes));
  CHECK(cudaMallocHost(&host, kBytes));
  copy_us(host, device, cudaMemcpyDeviceToHost);  // warm-up: the first copies map and set up
  const double d2h = copy_us(host, device, cudaMemcpyDeviceToHost);
  const double h2d = copy_us(device, host, cudaMemcpyHostToDevice);
  const double window = window_us(rank, device);
  const double trip = pingpong_us(rank, device);
  const double d2h_after = copy_us(host, device, cudaMemcpyDeviceToHost);
  const double h2d_after = copy_us(device, host, cudaMemcpyHostToDevice);
  std::printf("{\"rank\": %d, \"cpu\": %d, \"d2h_us\": %.3f, \"h2d_us\": %.3f, \"window_us\": %.2f, "
              "\"pingpong_us\": %.3f, \"d2h_after_us\": %.3f, \"h2d_after_us\": %.3f}\n",
              rank, sched_getcpu(), d2h, h2d, window, trip, d2h_after, h2d_after);
  std::fflush(stdout);
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  MPI_Finalize();
  return 0;
}
