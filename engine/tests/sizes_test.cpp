#include <gtest/gtest.h>

#include "core/error.h"
#include "core/sizes.h"

namespace commatlas {
namespace {

TEST(ParseSize, ValidForms) {
  EXPECT_EQ(parse_size("7"), 7u);
  EXPECT_EQ(parse_size("7B"), 7u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("4kib"), 4096u);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("2g"), 2ull << 30);
  EXPECT_EQ(parse_size("1T"), 1ull << 40);
  EXPECT_EQ(parse_size("  8 "), 8u);
  // Fractions that name whole bytes.
  EXPECT_EQ(parse_size("1.5K"), 1536u);
  EXPECT_EQ(parse_size("0.5M"), 512u << 10);
  EXPECT_EQ(parse_size("2.25G"), 9ull << 28);
}

TEST(ParseSize, MalformedThrowsUsageError) {
  for (const char* bad : {"", " ", "K", "4X", "-1", "0", "0K", "1.5", "1.3K", "1.K", ".5K", "1.0000001G", "4KB", "4 K", "M4", "+4", "0x10"})
    EXPECT_THROW(parse_size(bad), UsageError) << "'" << bad << "'";
}

TEST(ParseSize, OverflowThrows) {
  EXPECT_THROW(parse_size("99999999999999999999"), UsageError);
  EXPECT_THROW(parse_size("20000000T"), UsageError);
  EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);  // still fits in 64 bits
}

TEST(ParseSizeList, Forms) {
  EXPECT_EQ(parse_size_list("4096"), (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(parse_size_list("8:64"), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(parse_size_list("1:1K:x4"), (std::vector<std::uint64_t>{1, 4, 16, 64, 256, 1024}));
  EXPECT_EQ(parse_size_list("1:100:x4"), (std::vector<std::uint64_t>{1, 4, 16, 64}));  // hi off the grid
  EXPECT_EQ(parse_size_list("1M:4M:+1M"), (std::vector<std::uint64_t>{1 << 20, 2 << 20, 3 << 20, 4 << 20}));
  EXPECT_EQ(parse_size_list("1M:3M:+2M"), (std::vector<std::uint64_t>{1 << 20, 3 << 20}));
  EXPECT_EQ(parse_size_list("4K,1K,4096"), (std::vector<std::uint64_t>{1024, 4096}));  // sorted, deduplicated
  EXPECT_EQ(parse_size_list("8:1G:x4").size(), 14u);
}

TEST(ParseSizeList, MalformedThrows) {
  for (const char* bad : {"", ",", "1K,,2K", "1K,", "1:2:3:4", "8:1G:y2", "8:1G:x1", "8:1G:x", "8:1G:+0",
                          "8:1G:+", "8:1G:xx2", "a:1K", "1K:b", "1K:0"})
    EXPECT_THROW(parse_size_list(bad), UsageError) << "'" << bad << "'";
}

TEST(ParseSizeList, ReversedRangeThrows) { EXPECT_THROW(parse_size_list("1G:8"), UsageError); }

TEST(ParseSizeList, MaxPoints) {
  EXPECT_EQ(parse_size_list("1:100:+1", 100).size(), 100u);
  EXPECT_THROW(parse_size_list("1:101:+1", 100), UsageError);
  EXPECT_THROW(parse_size_list("1:1T:+1"), UsageError);  // would be 2^40 points
  EXPECT_THROW(parse_size_list("1,2,3", 2), UsageError);
}

TEST(FormatSize, ReadableUnits) {
  EXPECT_EQ(format_size(1), "1 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
  EXPECT_EQ(format_size(3ull << 19), "1.5 MiB");
}

}  // namespace
}  // namespace commatlas
