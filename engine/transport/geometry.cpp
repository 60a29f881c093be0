#include "transport/geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {

std::vector<int> grid_dims(int ranks, int dims) {
  std::vector<int> out(static_cast<std::size_t>(dims), 1);
  // Prime factors, largest first, each onto the currently smallest extent: MPI_Dims_create's
  // balanced result for the rank counts people use.
  std::vector<int> factors;
  int left = std::max(ranks, 1);
  for (int p = 2; p * p <= left; ++p)
    while (left % p == 0) {
      factors.push_back(p);
      left /= p;
    }
  if (left > 1) factors.push_back(left);
  std::sort(factors.rbegin(), factors.rend());
  for (int f : factors) *std::min_element(out.begin(), out.end()) *= f;
  std::sort(out.rbegin(), out.rend());
  return out;
}

int grid_neighbour(int rank, const std::vector<int>& dims, int direction, int stride) {
  std::vector<int> coord(dims.size());
  int r = rank;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    coord[d] = r % dims[d];
    r /= dims[d];
  }
  const std::size_t axis = static_cast<std::size_t>(direction / 2);
  const int step = direction % 2 == 1 ? stride : -stride;
  coord[axis] = ((coord[axis] + step) % dims[axis] + dims[axis]) % dims[axis];
  int out = 0;
  for (std::size_t d = dims.size(); d-- > 0;) out = out * dims[d] + coord[d];
  return out;
}

std::string HaloGeometry::describe() const {
  std::string edge = std::to_string(n);
  for (int d = 1; d < dims; ++d) edge += "x" + std::to_string(n);
  return edge + " doubles per rank, " + std::to_string(faces()) + " faces of " + format_size(face_bytes());
}

HaloGeometry halo_geometry(int dims, std::uint64_t bytes) {
  const double cells = static_cast<double>(bytes) / sizeof(double);
  auto n = static_cast<std::int64_t>(std::floor(std::pow(cells, 1.0 / dims) + 1e-9));
  return {dims, std::max<std::int64_t>(n, 2)};
}

std::uint64_t irregular_words(std::uint64_t seed, std::uint64_t step, int sender, int direction, std::uint64_t mean_words) {
  const std::uint64_t h = pattern_word(seed ^ 0xC0FFEEull, (step << 24) ^ (static_cast<std::uint64_t>(sender) << 4) ^
                                                                static_cast<std::uint64_t>(direction));
  return h % (2 * mean_words + 1);
}

PatternFault pattern_fault() {
  static const PatternFault fault = [] {
    const char* v = std::getenv("COMMATLAS_PATTERN_FAULT");
    const std::string text = v ? v : "";
    if (text.empty()) return PatternFault::None;
    if (text == "wrong_neighbour") return PatternFault::WrongNeighbour;
    if (text == "missing_message") return PatternFault::MissingMessage;
    throw UsageError("COMMATLAS_PATTERN_FAULT must be wrong_neighbour or missing_message, got '" + text + "'");
  }();
  return fault;
}

}  // namespace commatlas
