// Expected collective goodput from link graphs, checked against the numbers the Alps/Leonardo/LUMI
// study gives (De Sensi et al., SC24) and the H200 NVSwitch node this project measures on.
#include <gtest/gtest.h>

#include "topology/goodput.h"

namespace commatlas {
namespace {

constexpr double kGbit = 1.0 / 8;  // GB/s per Gb/s

// n GPUs, every pair linked by `links` links of `gbit` Gb/s.
LinkGraph full_mesh(int n, int links, double gbit) {
  LinkGraph g;
  g.gpus = n;
  g.source = "fixture";
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) g.bundles.push_back({a, b, links, gbit * kGbit});
  return g;
}

// LUMI: 8 MI250X GCDs; the two GCDs of a package share 4 Infinity Fabric links, and each GCD has two
// more single links to GCDs of other packages (400 Gb/s per link and direction). Reconstructed from
// the LUMI documentation's node figure and the study's figures (most loaded link: 4 routes), not a dump.
LinkGraph lumi() {
  LinkGraph g;
  g.gpus = 8;
  g.source = "fixture";
  const double link = 400 * kGbit;
  for (int p = 0; p < 4; ++p) g.bundles.push_back({2 * p, 2 * p + 1, 4, link});
  for (auto [a, b] : {std::pair{0, 2}, {0, 4}, {1, 3}, {1, 5}, {2, 6}, {3, 7}, {4, 6}, {5, 7}}) g.bundles.push_back({a, b, 1, link});
  return g;
}

TEST(Goodput, AlpsFourGh200) {  // 6 NVLink4 links of 200 Gb/s per pair
  const auto g = full_mesh(4, 6, 200);
  const auto a2a = expected_alltoall(g);
  ASSERT_TRUE(a2a);
  EXPECT_DOUBLE_EQ(a2a->forwarding_index, 1);
  EXPECT_NEAR(a2a->gpu_gbps, 450, 1e-9);  // 3.6 Tb/s
  const auto ar = expected_allreduce(g);
  ASSERT_TRUE(ar);
  EXPECT_NEAR(ar->gpu_gbps, 450, 1e-9);
}

TEST(Goodput, LeonardoFourA100) {  // 4 links of 200 Gb/s per pair
  const auto g = full_mesh(4, 4, 200);
  EXPECT_NEAR(expected_alltoall(g)->gpu_gbps, 300, 1e-9);  // 2.4 Tb/s
  EXPECT_NEAR(expected_allreduce(g)->gpu_gbps, 300, 1e-9);
}

TEST(Goodput, LumiEightGcds) {
  const auto g = lumi();
  const auto a2a = expected_alltoall(g);
  ASSERT_TRUE(a2a);
  EXPECT_DOUBLE_EQ(a2a->forwarding_index, 4);
  EXPECT_NEAR(a2a->pair_gbps, 100 * kGbit, 1e-9);  // 100 Gb/s per pair
  EXPECT_NEAR(a2a->gpu_gbps, 75, 1e-9);            // 600 Gb/s per GCD
  const auto ar = expected_allreduce(g);
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->rings, 2);
  EXPECT_NEAR(ar->gpu_gbps, 100, 1e-9);  // 800 Gb/s
}

TEST(Goodput, H200FourGpusOnNvswitch) {  // 18 links x 26.5625 GB/s from each GPU to the switch
  LinkGraph g;
  g.gpus = 4;
  g.switches = 1;
  g.source = "fixture";
  for (int i = 0; i < 4; ++i) g.bundles.push_back({i, 4, 18, 26.5625});
  const auto a2a = expected_alltoall(g);
  ASSERT_TRUE(a2a);
  EXPECT_NEAR(a2a->gpu_gbps, 478.125, 1e-9);
  EXPECT_DOUBLE_EQ(a2a->forwarding_index, 3);  // three routes leave each GPU over its switch links
  EXPECT_NEAR(expected_allreduce(g)->gpu_gbps, 478.125, 1e-9);
}

TEST(Goodput, UnknownWithAReason) {
  std::string why;
  LinkGraph split = full_mesh(2, 1, 100);
  split.gpus = 3;  // GPU 2 has no link
  EXPECT_FALSE(expected_alltoall(split, &why));
  EXPECT_NE(why.find("not linked"), std::string::npos) << why;
  EXPECT_FALSE(expected_allreduce(split, &why));
  const auto broadcast = expected_goodput_for("broadcast", 4, full_mesh(4, 6, 200));
  EXPECT_FALSE(broadcast.gbps);
  const auto wrong_ranks = expected_goodput_for("allreduce", 2, full_mesh(4, 6, 200));
  EXPECT_FALSE(wrong_ranks.gbps);
  EXPECT_NE(wrong_ranks.text.find("2 ranks"), std::string::npos);
  // A record's expected alltoall goodput is in buffer bytes: the study's 450 GB/s leave each GPU, and
  // the quarter of its buffer that is its own block crosses no link.
  EXPECT_NEAR(*expected_goodput_for("alltoall", 4, full_mesh(4, 6, 200)).gbps, 600, 1e-9);
}

TEST(Goodput, AlltoallOnTwoGpusCountsTheBlockThatStaysHome) {
  // 2x H100 (NV18): NCCL's alltoall moved 634 GB/s of 4 GiB buffers, where the links carry 478 GB/s
  // out of each GPU: half of each buffer stays on its GPU (results/nvidia-h100-x2/figures-that-hold-14).
  const LinkGraph pair = full_mesh(2, 18, 26.5625 / kGbit);
  const auto a2a = expected_alltoall(pair);
  ASSERT_TRUE(a2a);
  EXPECT_NEAR(a2a->gpu_gbps, 478.125, 1e-9);
  EXPECT_NEAR(a2a->buffer_gbps, 956.25, 1e-9);
  const auto answer = expected_goodput_for("alltoall", 2, pair);
  EXPECT_NEAR(*answer.gbps, 956.25, 1e-9);
  EXPECT_NE(answer.text.find("the 1/2 of its buffer that stays on the GPU crosses no link"), std::string::npos) << answer.text;
  // Allreduce's expectation is the study's, in buffer bytes already.
  EXPECT_NEAR(*expected_goodput_for("allreduce", 2, pair).gbps, 478.125, 1e-9);
}

}  // namespace
}  // namespace commatlas
