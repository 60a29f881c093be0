// The host's memory peak, where the machine tells it: the SMBIOS tables the firmware hands the
// kernel (/sys/firmware/dmi/tables/DMI, read directly, no dmidecode needed), the EDAC driver's
// channel layout, and `dmidecode` only where the kernel does not expose the tables.
//
// Peak = channels populated x transfer rate (MT/s) x data width (bytes). SMBIOS says each DIMM's
// rate and width but not which DIMMs share a channel; EDAC does where its driver is loaded.
// Without it, every populated DIMM is taken as a channel of its own, and the source says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/benchmark.h"  // Peak

namespace commatlas {

// One SMBIOS type 17 structure (Memory Device).
struct MemoryDevice {
  std::string locator;       // "DIMM_A1"
  std::string bank;          // "P0 CHANNEL A"
  std::string type;          // "DDR5", or "type 0x.." for one this table does not name
  std::uint64_t size_bytes = 0;  // 0: no module installed in this slot
  bool size_known = true;
  int data_width_bits = 0;   // without ECC bits; 0: unknown
  int speed_mts = 0;         // the module's rated speed; 0: unknown
  int configured_mts = 0;    // the speed it runs at (SMBIOS 2.7+); 0: unknown
  bool installed() const { return size_bytes > 0 || !size_known; }
  int running_mts() const { return configured_mts > 0 ? configured_mts : speed_mts; }
};

struct SmbiosMemory {
  std::vector<MemoryDevice> devices;  // every type 17 structure, empty slots included
  int arrays = 0;                     // type 16 (Physical Memory Array) structures for system memory
  int array_slots = 0;                // their "number of memory devices", summed
  std::string error;                  // why the table could not be walked (truncated, ...)
};

// Walks a raw SMBIOS structure table (the bytes of /sys/firmware/dmi/tables/DMI).
SmbiosMemory parse_smbios_memory(const std::string& table);

struct HostMemoryPeak {
  std::optional<Peak> peak;  // whole machine, all sockets
  std::string unknown;       // why there is none
  int arrays = 0;            // SMBIOS memory arrays (one per socket, as a rule)
};

// `edac_channels`: channels with a DIMM as the EDAC driver lists them; 0 when not known.
HostMemoryPeak host_memory_peak(const SmbiosMemory& smbios, int edac_channels);

// Distinct (controller, channel) pairs holding a DIMM under an EDAC sysfs tree
// (/sys/devices/system/edac/mc/mcN/dimmM/dimm_location "channel 0 slot 0"); 0 when none.
int edac_populated_channels(const std::string& edac_mc_dir);

// From the given places (tests pass fixture paths): the DMI table file, its directory's parent
// (to tell "no tables" from "no firmware directory"), the EDAC tree, and whether to ask dmidecode.
HostMemoryPeak discover_host_memory_peak(const std::string& dmi_table, const std::string& edac_mc_dir,
                                         bool try_dmidecode);

// This machine's, discovered once per process.
const HostMemoryPeak& host_memory_peak();

}  // namespace commatlas
