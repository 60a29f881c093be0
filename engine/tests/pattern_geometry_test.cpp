// The application patterns' geometry: the process grid, neighbours and faces every pattern
// mechanism relies on (transport/geometry.h).
#include <gtest/gtest.h>

#include <set>

#include "transport/geometry.h"

namespace commatlas {
namespace {

TEST(PatternGeometry, GridDimsFactorLikeMpiDimsCreate) {
  EXPECT_EQ(grid_dims(4, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(grid_dims(6, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(grid_dims(2, 2), (std::vector<int>{2, 1}));
  EXPECT_EQ(grid_dims(8, 3), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(grid_dims(4, 3), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(grid_dims(12, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(grid_dims(7, 2), (std::vector<int>{7, 1}));
}

// Rank a's neighbour in direction k has a as its neighbour in the opposite direction, on every
// rank count: the messages of a step always pair up, so none waits forever.
TEST(PatternGeometry, NeighboursArePeriodicAndSymmetric) {
  for (int dims : {2, 3})
    for (int ranks = 1; ranks <= 12; ++ranks) {
      const auto grid = grid_dims(ranks, dims);
      for (int r = 0; r < ranks; ++r)
        for (int k = 0; k < 2 * dims; ++k) {
          for (int stride : {1, 2}) {
            const int nb = grid_neighbour(r, grid, k, stride);
            ASSERT_GE(nb, 0);
            ASSERT_LT(nb, ranks);
            EXPECT_EQ(grid_neighbour(nb, grid, opposite_direction(k), stride), r) << ranks << " ranks, rank " << r << " dir " << k;
          }
        }
    }
  // 2x2: rank 0's x neighbours are both rank 1, its y neighbours both rank 2.
  const auto g = grid_dims(4, 2);
  EXPECT_EQ(grid_neighbour(0, g, 0), 1);
  EXPECT_EQ(grid_neighbour(0, g, 1), 1);
  EXPECT_EQ(grid_neighbour(0, g, 2), 2);
  EXPECT_EQ(grid_neighbour(0, g, 3), 2);
}

TEST(PatternGeometry, FacesAreInteriorLayersAndGhostsLieBeyond) {
  for (int dims : {2, 3}) {
    const HaloGeometry g = halo_geometry(dims, dims == 2 ? 8 * 16 * 16 : 8 * 8 * 8 * 8);
    ASSERT_EQ(g.n, dims == 2 ? 16 : 8);
    for (int k = 0; k < g.faces(); ++k) {
      std::set<std::int64_t> interior, ghost;
      for (std::int64_t f = 0; f < g.face_cells(); ++f) {
        interior.insert(g.face_cell(k, f, false));
        ghost.insert(g.face_cell(k, f, true));
      }
      EXPECT_EQ(static_cast<std::int64_t>(interior.size()), g.face_cells());  // no cell twice
      EXPECT_EQ(static_cast<std::int64_t>(ghost.size()), g.face_cells());
      const std::int64_t stride = k / 2 == 0 ? 1 : k / 2 == 1 ? g.extent() : g.extent() * g.extent();
      // The ghost cell lies one step beyond the interior cell, outward.
      for (std::int64_t f = 0; f < g.face_cells(); ++f)
        EXPECT_EQ(g.face_cell(k, f, true) - g.face_cell(k, f, false), k % 2 ? stride : -stride);
    }
  }
}

TEST(PatternGeometry, IrregularSizesAreSeededAndBounded) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t step = 0; step < 50; ++step) {
    const std::uint64_t w = irregular_words(1, step, 3, 2, 100);
    EXPECT_LE(w, 200u);
    EXPECT_EQ(w, irregular_words(1, step, 3, 2, 100));
    seen.insert(w);
  }
  EXPECT_GT(seen.size(), 20u);  // the sizes vary from step to step
  EXPECT_NE(irregular_words(1, 0, 3, 2, 1000), irregular_words(2, 0, 3, 2, 1000));
}

}  // namespace
}  // namespace commatlas
