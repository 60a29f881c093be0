// The geometry of the application patterns, independent of MPI, CUDA and NCCL: the periodic
// process grid, each rank's neighbours, the faces of a halo exchange, the message sizes of the
// irregular (Quicksilver-like) exchange and the values every message carries, so that the data
// check can recompute what each ghost cell and each message must hold.
//
// Usable from host and device code (face indexing runs inside the GPU pack/unpack kernels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/pattern.h"  // COMMATLAS_HD

namespace commatlas {

// MPI_Dims_create's rule: `ranks` factored into `dims` extents as equal as possible, largest
// first (6 ranks in 2-D: 3x2; 4 ranks in 3-D: 2x2x1).
std::vector<int> grid_dims(int ranks, int dims);

// Directions of a rank's neighbours, in order: -x, +x, -y, +y, -z, +z (2 per dimension).
inline int opposite_direction(int direction) { return direction ^ 1; }

// The rank at `direction` of `rank` on the periodic grid `dims` (rank = x + dx*(y + dy*z)). A
// dimension of extent 1 or 2 wraps onto the rank itself or onto the same rank twice: every rank
// always has all 2*dims neighbours. `stride` is how far a step goes (1; the planted wrong-neighbour
// fault uses 2).
int grid_neighbour(int rank, const std::vector<int>& dims, int direction, int stride = 1);

// One rank's subdomain: an n^d grid of doubles with one ghost layer on every side, (n+2)^d stored.
struct HaloGeometry {
  int dims = 2;
  std::int64_t n = 0;  // interior cells per edge
  COMMATLAS_HD std::int64_t extent() const { return n + 2; }
  COMMATLAS_HD std::int64_t stored_cells() const {
    std::int64_t c = 1;
    for (int d = 0; d < dims; ++d) c *= extent();
    return c;
  }
  COMMATLAS_HD std::int64_t face_cells() const {
    std::int64_t c = 1;
    for (int d = 1; d < dims; ++d) c *= n;
    return c;
  }
  std::size_t face_bytes() const { return static_cast<std::size_t>(face_cells()) * sizeof(double); }
  int faces() const { return 2 * dims; }
  // Stored index of face cell f (0 <= f < face_cells) of the face at `direction`: the interior
  // layer next to that side (ghost = false: what is sent) or the ghost layer beyond it (what is
  // received).
  COMMATLAS_HD std::int64_t face_cell(int direction, std::int64_t f, bool ghost) const {
    const int axis = direction / 2;
    const bool high = direction % 2 == 1;
    const std::int64_t at = ghost ? (high ? n + 1 : 0) : (high ? n : 1);
    std::int64_t index = 0, stride = 1;
    for (int d = 0; d < dims; ++d) {
      std::int64_t c;
      if (d == axis) {
        c = at;
      } else {
        c = 1 + f % n;
        f /= n;
      }
      index += c * stride;
      stride *= extent();
    }
    return index;
  }
  // "1024x1024 doubles per rank, 4 faces of 8 KiB"
  std::string describe() const;
};

// The subdomain that `bytes` of doubles hold per rank: n = floor((bytes/8)^(1/dims)), at least 2.
HaloGeometry halo_geometry(int dims, std::uint64_t bytes);

// Interior cell `index` (stored index) of `rank`: exact in a double for any realistic rank count.
COMMATLAS_HD inline double halo_value(int rank, std::int64_t index) {
  return static_cast<double>(rank + 1) * 4294967296.0 + static_cast<double>(index);
}
// What ghost cells hold before an exchange: no rank's value (negative).
inline constexpr double kHaloPoison = -1.0;

// The irregular exchange: per step each rank sends every neighbour a different number of 8-byte
// words, drawn uniformly from [0, 2*mean] by a seeded hash of (seed, step, sender, direction), so
// every rank can recompute any message's size and a run is reproducible.
std::uint64_t irregular_words(std::uint64_t seed, std::uint64_t step, int sender, int direction, std::uint64_t mean_words);
// Word i of the message `sender` sends in `direction` at `step`.
inline std::uint64_t irregular_word(int sender, int direction, std::uint64_t step, std::uint64_t i) {
  return pattern_word((static_cast<std::uint64_t>(sender) << 8 | static_cast<std::uint64_t>(direction)) ^ (step << 32), i);
}

// A fault planted on purpose, to show that the data check catches it (tests only): set through
// the environment variable COMMATLAS_PATTERN_FAULT.
enum class PatternFault {
  None,
  WrongNeighbour,  // every rank's x neighbours are 2 steps away instead of 1 (consistently, so nothing hangs)
  MissingMessage,  // rank 0's first message is neither sent nor received (the last bucket, for allreduce)
};
PatternFault pattern_fault();  // read once; an unknown value is a UsageError

}  // namespace commatlas
