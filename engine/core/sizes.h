// Message-size lists: parsing "8:1G:x4" / "1K,64K,1M", and printing sizes the way people read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace commatlas {

// Parses one size: a whole number with an optional binary suffix: B, K/KiB, M/MiB, G/GiB, T/TiB
// (all powers of 1024, as the methodology writes sizes). Throws UsageError on anything else.
std::uint64_t parse_size(const std::string& text);

// Parses a size list. Accepted forms, comma-separated and combinable:
//   "4096"           one size
//   "8:1G"           8 B to 1 GiB, doubling
//   "8:1G:x4"        8 B to 1 GiB, times 4 each step
//   "1M:16M:+1M"     1 MiB to 16 MiB in 1 MiB steps
// The result is sorted and free of duplicates. Throws UsageError on malformed or empty lists,
// zero sizes, reversed ranges and sweeps of more than `max_points` points.
std::vector<std::uint64_t> parse_size_list(const std::string& text, std::size_t max_points = 4096);

// A geometric sweep from lo to hi (inclusive when hi is on the grid).
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor);

// The default sizes of every benchmark that moves bytes between two places (copies, messages,
// collectives): 8 B, then x16 from 4 KiB (4 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB, 4 GiB), from
// `from` up to `to`. One grid, so that a map cell compares every mechanism at one size: when the
// families swept sizes of their own, a cell could hold one family alone and call it fastest.
std::vector<std::uint64_t> transfer_sizes(std::uint64_t from, std::uint64_t to);

// "1 B", "4 KiB", "1.5 MiB": exact for powers of two, 3 significant digits otherwise.
std::string format_size(std::uint64_t bytes);

}  // namespace commatlas
