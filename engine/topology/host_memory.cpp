// SMBIOS memory devices and the host memory peak (see host_memory.h). Offsets and codes are the
// SMBIOS reference specification's (DSP0134 3.x, 7.17 and 7.18).
#include "topology/host_memory.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <utility>

namespace commatlas {
namespace {

constexpr std::uint8_t kTypePhysicalMemoryArray = 16;
constexpr std::uint8_t kTypeMemoryDevice = 17;
constexpr std::uint8_t kTypeEndOfTable = 127;
constexpr std::uint8_t kArrayUseSystemMemory = 0x03;

unsigned byte_at(const std::string& s, std::size_t at) { return static_cast<unsigned char>(s[at]); }

// Little-endian fields of one structure's formatted area; 0 past its declared length (older
// SMBIOS versions end the structure before the later fields).
struct Formatted {
  const std::string& table;
  std::size_t start, length;
  std::uint64_t get(std::size_t offset, int bytes) const {
    if (offset + bytes > length) return 0;
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | byte_at(table, start + offset + i);
    return v;
  }
  bool has(std::size_t offset, int bytes) const { return offset + bytes <= length; }
};

std::string memory_type_name(unsigned code) {
  switch (code) {
    case 0x12: return "DDR";
    case 0x13: return "DDR2";
    case 0x18: return "DDR3";
    case 0x1A: return "DDR4";
    case 0x1B: return "LPDDR";
    case 0x1C: return "LPDDR2";
    case 0x1D: return "LPDDR3";
    case 0x1E: return "LPDDR4";
    case 0x20: return "HBM";
    case 0x21: return "HBM2";
    case 0x22: return "DDR5";
    case 0x23: return "LPDDR5";
    case 0x24: return "HBM3";
    case 0x02: return "unknown";
    default: {
      char buf[16];
      std::snprintf(buf, sizeof buf, "type 0x%02X", code);
      return buf;
    }
  }
}

MemoryDevice memory_device(const Formatted& f, const std::vector<std::string>& strings) {
  auto text = [&](std::size_t offset) {
    const unsigned index = static_cast<unsigned>(f.get(offset, 1));
    return index >= 1 && index <= strings.size() ? strings[index - 1] : std::string();
  };
  MemoryDevice d;
  const unsigned width = static_cast<unsigned>(f.get(0x0A, 2));
  d.data_width_bits = width == 0xFFFF ? 0 : static_cast<int>(width);
  const unsigned size = static_cast<unsigned>(f.get(0x0C, 2));
  if (size == 0xFFFF) {
    d.size_known = false;
  } else if (size == 0x7FFF && f.has(0x1C, 4)) {
    d.size_bytes = (f.get(0x1C, 4) & 0x7FFFFFFFu) << 20;  // extended size, in MiB
  } else {
    // Bit 15 chooses the unit: 1 KiB when set, 1 MiB when clear.
    d.size_bytes = (size & 0x8000) ? std::uint64_t(size & 0x7FFF) << 10 : std::uint64_t(size) << 20;
  }
  d.locator = text(0x10);
  d.bank = text(0x11);
  d.type = memory_type_name(static_cast<unsigned>(f.get(0x12, 1)));
  // 0xFFFF in the word fields: the rate is in the 3.3 extended DWORD fields (bits 30:0, MT/s).
  auto speed = [&](std::size_t word, std::size_t extended) {
    const std::uint64_t v = f.get(word, 2);
    if (v == 0xFFFF) return static_cast<int>(f.get(extended, 4) & 0x7FFFFFFFu);
    return static_cast<int>(v);
  };
  d.speed_mts = speed(0x15, 0x54);
  d.configured_mts = speed(0x20, 0x58);
  return d;
}

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::string find_dmidecode() {
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  dirs += ":/usr/sbin:/sbin";  // where it lives, and not on every user's PATH
  std::istringstream in(dirs);
  std::string dir;
  while (std::getline(in, dir, ':'))
    if (!dir.empty() && executable(dir + "/dmidecode")) return dir + "/dmidecode";
  return "";
}

// dmidecode's binary dump: the table follows a 32-byte entry point.
std::string table_from_dmidecode(const std::string& dmidecode, std::string& why) {
  char dir[] = "/tmp/commatlas-dmi-XXXXXX";
  if (!mkdtemp(dir)) {
    why = "dmidecode: no temporary directory (" + std::string(std::strerror(errno)) + ")";
    return "";
  }
  const std::string dump = std::string(dir) + "/dump";
  const std::string command = "'" + dmidecode + "' --dump-bin '" + dump + "' >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(dump, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(dump.c_str());
  rmdir(dir);
  if (status != 0 || bytes.size() <= 32) {
    why = dmidecode + " could not read the tables either (exit " +
          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "; it needs root)";
    return "";
  }
  return bytes.substr(32);
}

}  // namespace

SmbiosMemory parse_smbios_memory(const std::string& table) {
  SmbiosMemory out;
  std::size_t at = 0;
  while (at + 4 <= table.size()) {
    const unsigned type = byte_at(table, at), length = byte_at(table, at + 1);
    if (length < 4 || at + length > table.size()) {
      out.error = "a structure at byte " + std::to_string(at) + " runs past the table's end";
      break;
    }
    // The strings follow the formatted area, each NUL-terminated; the set ends with a second NUL
    // (two NULs at once when there are none).
    std::vector<std::string> strings;
    std::size_t s = at + length;
    if (s + 1 < table.size() && table[s] == '\0' && table[s + 1] == '\0') {
      s += 2;
    } else {
      while (s < table.size() && table[s] != '\0') {
        const std::size_t end = table.find('\0', s);
        if (end == std::string::npos) {
          s = table.size();
          break;
        }
        strings.push_back(table.substr(s, end - s));
        s = end + 1;
      }
      if (s >= table.size()) {
        out.error = "the strings of the structure at byte " + std::to_string(at) + " run past the table's end";
        break;
      }
      ++s;  // the set's terminating NUL
    }
    const Formatted f{table, at, length};
    if (type == kTypeMemoryDevice) out.devices.push_back(memory_device(f, strings));
    if (type == kTypePhysicalMemoryArray && f.get(0x05, 1) == kArrayUseSystemMemory) {
      ++out.arrays;
      out.array_slots += static_cast<int>(f.get(0x0D, 2));
    }
    if (type == kTypeEndOfTable) break;
    at = s;
  }
  return out;
}

HostMemoryPeak host_memory_peak(const SmbiosMemory& smbios, int edac_channels) {
  HostMemoryPeak out;
  out.arrays = smbios.arrays;
  std::vector<const MemoryDevice*> installed;
  for (const MemoryDevice& d : smbios.devices)
    if (d.installed()) installed.push_back(&d);
  if (installed.empty()) {
    out.unknown = smbios.devices.empty()
                      ? "no SMBIOS memory devices (type 17) in the firmware's tables (a VM?)"
                      : "SMBIOS lists " + plural(smbios.devices.size(), "memory slot", "memory slots") +
                            " but no installed module (a VM?)";
    if (!smbios.error.empty()) out.unknown += "; " + smbios.error;
    return out;
  }
  std::size_t no_speed = 0, no_width = 0;
  for (const MemoryDevice* d : installed) {
    no_speed += d->running_mts() <= 0;
    no_width += d->data_width_bits <= 0;
  }
  if (no_speed || no_width) {
    out.unknown = "SMBIOS gives no " + std::string(no_speed ? "speed" : "data width") + " for " +
                  std::to_string(no_speed ? no_speed : no_width) + " of " +
                  plural(installed.size(), "installed memory module", "installed memory modules") + " (a VM?)";
    return out;
  }
  // One controller runs its channels at one rate: the slowest module's. Widths are the module's
  // data bits (ECC excluded); a DDR5 module's two 32-bit subchannels report 64 together.
  int mts = installed.front()->running_mts(), width = installed.front()->data_width_bits;
  std::set<std::string> types, widths;
  bool configured = true;
  for (const MemoryDevice* d : installed) {
    mts = std::min(mts, d->running_mts());
    width = std::min(width, d->data_width_bits);
    types.insert(d->type);
    configured = configured && d->configured_mts > 0;
  }
  const bool from_edac = edac_channels > 0;
  const int channels = from_edac ? edac_channels : static_cast<int>(installed.size());
  std::string type;
  for (const std::string& t : types) type += (type.empty() ? "" : "/") + t;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d channel%s x %d MT/s x %d bit / 8", channels, channels == 1 ? "" : "s", mts, width);
  Peak p;
  p.gbps = channels * static_cast<double>(mts) * width / 8.0 / 1000.0;
  p.source = type + " host memory: " + buf + " (SMBIOS type 17, " +
             (configured ? "configured speed" : "rated speed: no configured speed given") + ", " +
             plural(installed.size(), "module", "modules") + "; " +
             (from_edac ? "populated channels from EDAC"
                        : "one module per channel assumed: SMBIOS does not say which modules share a channel, "
                          "so with two per channel the limit is half this") +
             "; all sockets together)";
  out.peak = p;
  return out;
}

int edac_populated_channels(const std::string& edac_mc_dir) {
  std::set<std::pair<std::string, std::string>> channels;
  DIR* mcs = opendir(edac_mc_dir.c_str());
  if (!mcs) return 0;
  while (dirent* mc = readdir(mcs)) {
    const std::string mc_name = mc->d_name;
    if (mc_name.rfind("mc", 0) != 0) continue;
    const std::string mc_dir = edac_mc_dir + "/" + mc_name;
    DIR* dimms = opendir(mc_dir.c_str());
    if (!dimms) continue;
    while (dirent* dimm = readdir(dimms)) {
      const std::string dimm_name = dimm->d_name;
      if (dimm_name.rfind("dimm", 0) != 0 && dimm_name.rfind("rank", 0) != 0) continue;
      std::ifstream size_file(mc_dir + "/" + dimm_name + "/size");
      std::ifstream location_file(mc_dir + "/" + dimm_name + "/dimm_location");
      long long size_mb = 0;
      std::string location;
      if (!(size_file >> size_mb) || size_mb <= 0 || !std::getline(location_file, location)) continue;
      // "channel 1 slot 0 " (or "csrow 0 channel 1 "): the channel is the word after "channel".
      std::istringstream words(location);
      std::string word, channel;
      while (words >> word)
        if (word == "channel" && words >> channel) break;
      if (!channel.empty()) channels.insert({mc_name, channel});
    }
    closedir(dimms);
  }
  closedir(mcs);
  return static_cast<int>(channels.size());
}

HostMemoryPeak discover_host_memory_peak(const std::string& dmi_table, const std::string& edac_mc_dir,
                                         bool try_dmidecode) {
  std::ifstream in(dmi_table, std::ios::binary);
  std::string table;
  std::string why_not;
  if (in) {
    table.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    const int err = errno;
    why_not = err == ENOENT ? "no SMBIOS tables at " + dmi_table + " (a VM or container that hides them?)"
                            : dmi_table + " not readable: " + std::strerror(err);
    // dmidecode reads the same tables (or /dev/mem) and needs root as much: it only helps where
    // the kernel does not expose them but a privileged process may still reach the firmware.
    const std::string dmidecode = try_dmidecode ? find_dmidecode() : "";
    if (dmidecode.empty()) {
      HostMemoryPeak out;
      out.unknown = why_not + (try_dmidecode ? "; no dmidecode installed" : "");
      return out;
    }
    std::string why_dmidecode;
    table = table_from_dmidecode(dmidecode, why_dmidecode);
    if (table.empty()) {
      HostMemoryPeak out;
      out.unknown = why_not + "; " + why_dmidecode;
      return out;
    }
  }
  HostMemoryPeak out = host_memory_peak(parse_smbios_memory(table), edac_populated_channels(edac_mc_dir));
  if (out.peak && !why_not.empty()) out.peak->source += " (read through dmidecode: " + why_not + ")";
  return out;
}

const HostMemoryPeak& host_memory_peak() {
  static const HostMemoryPeak peak =
      discover_host_memory_peak("/sys/firmware/dmi/tables/DMI", "/sys/devices/system/edac/mc", true);
  return peak;
}

}  // namespace commatlas
