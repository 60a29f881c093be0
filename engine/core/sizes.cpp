#include "core/sizes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

#include "core/error.h"

namespace commatlas {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::uint64_t checked_multiply(std::uint64_t a, std::uint64_t b, const std::string& text) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    throw UsageError("size '" + text + "' is too large");
  return a * b;
}

}  // namespace

std::uint64_t parse_size(const std::string& raw) {
  const std::string text = trim(raw);
  if (text.empty()) throw UsageError("empty size in size list");
  std::size_t i = 0;
  std::uint64_t number = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw UsageError("size '" + text + "' is too large");
    number = number * 10 + digit;
    ++i;
  }
  if (i == 0) throw UsageError("size '" + text + "' does not start with a number");
  // A fraction (1.5K) is accepted when it names whole bytes: 1.5K is 1536 B, 1.5 B is refused.
  std::uint64_t fraction = 0, fraction_scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (fraction_scale >= 1000000)
        throw UsageError("size '" + text + "' has more than 6 decimals");
      fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
      fraction_scale *= 10;
      ++i;
    }
    if (fraction_scale == 1) throw UsageError("size '" + text + "' has no digit after its point");
  }
  std::string suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::uint64_t unit;
  if (suffix.empty() || suffix == "B")
    unit = 1;
  else if (suffix == "K" || suffix == "KIB")
    unit = 1ull << 10;
  else if (suffix == "M" || suffix == "MIB")
    unit = 1ull << 20;
  else if (suffix == "G" || suffix == "GIB")
    unit = 1ull << 30;
  else if (suffix == "T" || suffix == "TIB")
    unit = 1ull << 40;
  else
    throw UsageError("size '" + text + "' has an unknown unit (use B, K, M, G, T; powers of 1024)");
  std::uint64_t bytes = checked_multiply(number, unit, text);
  if (fraction != 0) {
    // fraction < 10^6 and unit <= 2^40: the product fits in 64 bits.
    const std::uint64_t scaled = fraction * unit;
    if (scaled % fraction_scale != 0)
      throw UsageError("size '" + text + "' is not a whole number of bytes (" +
                       std::to_string(static_cast<double>(scaled) / static_cast<double>(fraction_scale)) +
                       " B after the point): sizes are whole bytes");
    const std::uint64_t extra = scaled / fraction_scale;
    if (bytes > std::numeric_limits<std::uint64_t>::max() - extra) throw UsageError("size '" + text + "' is too large");
    bytes += extra;
  }
  if (bytes == 0) throw UsageError("size '" + text + "' is zero");
  return bytes;
}

std::vector<std::uint64_t> transfer_sizes(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : {std::uint64_t{8}, std::uint64_t{4} << 10, std::uint64_t{64} << 10, std::uint64_t{1} << 20,
                          std::uint64_t{16} << 20, std::uint64_t{256} << 20, std::uint64_t{4} << 30})
    if (s >= from && s <= to) out.push_back(s);
  return out;
}

std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor) {
  std::vector<std::uint64_t> out;
  if (factor < 2) return out;
  for (std::uint64_t s = lo; s <= hi; ) {
    out.push_back(s);
    if (s > hi / factor) break;
    s *= factor;
  }
  return out;
}

std::vector<std::uint64_t> parse_size_list(const std::string& text, std::size_t max_points) {
  if (trim(text).empty()) throw UsageError("size list is empty");
  std::vector<std::uint64_t> sizes;
  for (const std::string& item_raw : split(text, ',')) {
    const std::string item = trim(item_raw);
    if (item.empty()) throw UsageError("size list '" + text + "' has an empty entry");
    const auto fields = split(item, ':');
    if (fields.size() == 1) {
      sizes.push_back(parse_size(fields[0]));
    } else if (fields.size() == 2 || fields.size() == 3) {
      const std::uint64_t lo = parse_size(fields[0]);
      const std::uint64_t hi = parse_size(fields[1]);
      if (lo > hi) throw UsageError("size range '" + item + "' runs backwards");
      std::string step = fields.size() == 3 ? trim(fields[2]) : "x2";
      if (step.size() < 2 || (step[0] != 'x' && step[0] != 'X' && step[0] != '+'))
        throw UsageError("size step '" + step + "' must be xN (multiply) or +SIZE (add)");
      if (step[0] == '+') {
        const std::uint64_t inc = parse_size(step.substr(1));
        if ((hi - lo) / inc + 1 > max_points)
          throw UsageError("size range '" + item + "' has more than " + std::to_string(max_points) + " points");
        for (std::uint64_t s = lo; s <= hi; s += inc) {
          sizes.push_back(s);
          if (hi - s < inc) break;
        }
      } else {
        const std::string digits = step.substr(1);
        if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) || digits.size() > 6)
          throw UsageError("size step '" + step + "' must be x followed by a whole number");
        const std::uint64_t factor = std::stoull(digits);
        if (factor < 2) throw UsageError("size step '" + step + "' must multiply by at least 2");
        const auto sweep = geometric_sizes(lo, hi, factor);
        sizes.insert(sizes.end(), sweep.begin(), sweep.end());
      }
    } else {
      throw UsageError("size entry '" + item + "' must be SIZE, LO:HI or LO:HI:STEP");
    }
    if (sizes.size() > max_points)
      throw UsageError("size list has more than " + std::to_string(max_points) + " points");
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

}  // namespace commatlas
