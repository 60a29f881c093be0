#include "core/reuse_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace commatlas {
namespace {

// What the pool released, in order; the buffers are one-byte stand-ins.
struct Released {
  std::vector<void*> ptrs;
};

TEST(ReusePool, GivesBackOnlyTheSameBytesOnTheSameNode) {
  std::vector<char> a(1), b(1);
  Released released;
  ReusePool pool(1000, [&](void* p) { released.ptrs.push_back(p); });
  EXPECT_EQ(pool.take(100, 0), nullptr);
  pool.give(a.data(), 100, 0);
  EXPECT_EQ(pool.take(100, 1), nullptr);  // another node's pages
  EXPECT_EQ(pool.take(99, 0), nullptr);   // another size
  EXPECT_EQ(pool.take(100, 0), a.data());
  EXPECT_EQ(pool.take(100, 0), nullptr);  // handed out once
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.give(a.data(), 100, 0);
  pool.give(b.data(), 100, 0);
  EXPECT_EQ(pool.kept_bytes(), 200u);
  EXPECT_TRUE(released.ptrs.empty());
}

TEST(ReusePool, ReleasesTheOldestToStayUnderTheCap) {
  std::vector<char> a(1), b(1), c(1), big(1);
  Released released;
  ReusePool pool(250, [&](void* p) { released.ptrs.push_back(p); });
  pool.give(a.data(), 100, 0);
  pool.give(b.data(), 100, 0);
  pool.give(c.data(), 100, 0);  // 300 > 250: a goes
  EXPECT_EQ(released.ptrs, std::vector<void*>{a.data()});
  EXPECT_EQ(pool.kept_bytes(), 200u);
  pool.give(big.data(), 251, 0);  // alone over the cap: released at once, the others stay
  EXPECT_EQ(released.ptrs, (std::vector<void*>{a.data(), big.data()}));
  EXPECT_EQ(pool.kept_bytes(), 200u);
  EXPECT_EQ(pool.take(100, 0), b.data());  // oldest kept first
}

TEST(ReusePool, ReleasesWhatItKeepsWhenDestroyed) {
  std::vector<char> a(1), b(1);
  Released released;
  {
    ReusePool pool(1000, [&](void* p) { released.ptrs.push_back(p); });
    pool.give(a.data(), 10, 0);
    pool.give(b.data(), 20, 1);
    pool.give(nullptr, 30, 0);  // nothing to keep
    EXPECT_EQ(pool.kept_bytes(), 30u);
  }
  EXPECT_EQ(released.ptrs, (std::vector<void*>{a.data(), b.data()}));
}

}  // namespace
}  // namespace commatlas
