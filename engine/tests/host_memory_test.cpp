// The SMBIOS reader and the host memory peak, from table bytes laid out as the kernel exposes
// them (tests/fixtures/dmi/make_fixtures.py writes them after DSP0134 3.3), and an EDAC tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "topology/host_memory.h"
#include "topology/topology.h"

namespace commatlas {
namespace {

std::string fixture_path(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / "dmi" / name).string();
}

std::string fixture(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Smbios, ReadsEveryMemoryDeviceEmptySlotsIncluded) {
  const SmbiosMemory s = parse_smbios_memory(fixture("ddr5_2dimm.bin"));
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.arrays, 1);
  EXPECT_EQ(s.array_slots, 4);
  ASSERT_EQ(s.devices.size(), 4u);
  const MemoryDevice& a1 = s.devices[0];
  EXPECT_EQ(a1.locator, "DIMM_A1");
  EXPECT_EQ(a1.bank, "P0 CHANNEL A");
  EXPECT_EQ(a1.type, "DDR5");
  EXPECT_EQ(a1.size_bytes, 32ull << 30);  // through the extended size field
  EXPECT_EQ(a1.data_width_bits, 64);
  EXPECT_EQ(a1.speed_mts, 5600);
  EXPECT_EQ(a1.configured_mts, 4800);
  EXPECT_TRUE(a1.installed());
  const MemoryDevice& a2 = s.devices[1];
  EXPECT_EQ(a2.locator, "DIMM_A2");
  EXPECT_FALSE(a2.installed());
  EXPECT_EQ(a2.data_width_bits, 0);
  EXPECT_EQ(s.devices[2].locator, "DIMM_B1");
}

TEST(Smbios, PeakIsChannelsTimesConfiguredRateTimesWidth) {
  const HostMemoryPeak p = host_memory_peak(parse_smbios_memory(fixture("ddr5_2dimm.bin")), 0);
  ASSERT_TRUE(p.peak) << p.unknown;
  // 2 modules x 4800 MT/s x 8 bytes: the configured rate, not the rated 5600.
  EXPECT_DOUBLE_EQ(p.peak->gbps, 76.8);
  EXPECT_NE(p.peak->source.find("DDR5 host memory: 2 channels x 4800 MT/s x 64 bit / 8"), std::string::npos) << p.peak->source;
  EXPECT_NE(p.peak->source.find("one module per channel assumed"), std::string::npos) << p.peak->source;
  EXPECT_EQ(p.arrays, 1);
}

TEST(Smbios, EdacChannelsReplaceTheOnePerModuleAssumption) {
  const HostMemoryPeak p = host_memory_peak(parse_smbios_memory(fixture("ddr5_2dimm.bin")), 1);
  ASSERT_TRUE(p.peak);
  EXPECT_DOUBLE_EQ(p.peak->gbps, 38.4);
  EXPECT_NE(p.peak->source.find("populated channels from EDAC"), std::string::npos) << p.peak->source;
}

TEST(Smbios, ExtendedSpeedFieldsAboveTheWordRange) {
  const SmbiosMemory s = parse_smbios_memory(fixture("extended_speed.bin"));
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].speed_mts, 70400);
  EXPECT_EQ(s.devices[0].configured_mts, 70400);
  EXPECT_EQ(s.devices[0].size_bytes, 8ull << 30);
}

TEST(Smbios, AVmWithoutSpeedsSaysSoInsteadOfAPeak) {
  const SmbiosMemory s = parse_smbios_memory(fixture("qemu_vm.bin"));
  ASSERT_EQ(s.devices.size(), 1u);  // the 2.8-length structure: later fields read as absent
  EXPECT_EQ(s.devices[0].size_bytes, 16ull << 30);
  EXPECT_EQ(s.devices[0].speed_mts, 0);
  const HostMemoryPeak p = host_memory_peak(s, 0);
  EXPECT_FALSE(p.peak);
  EXPECT_EQ(p.unknown, "SMBIOS gives no speed for 1 of 1 installed memory module (a VM?)");
}

TEST(Smbios, NoMemoryDevicesAndATruncatedTable) {
  EXPECT_EQ(host_memory_peak(parse_smbios_memory(""), 0).unknown,
            "no SMBIOS memory devices (type 17) in the firmware's tables (a VM?)");
  const SmbiosMemory cut = parse_smbios_memory(fixture("truncated.bin"));
  EXPECT_EQ(cut.devices.size(), 1u);
  EXPECT_NE(cut.error.find("run past the table's end"), std::string::npos) << cut.error;
}

class HostMemoryFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("commatlas-dmi-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  std::string path(const std::string& rel) const { return (dir_ / rel).string(); }
  std::filesystem::path dir_;
};

TEST_F(HostMemoryFiles, EdacCountsChannelsThatHoldAModule) {
  write("mc/mc0/dimm0/size", "32768\n");
  write("mc/mc0/dimm0/dimm_location", "channel 0 slot 0 \n");
  write("mc/mc0/dimm1/size", "32768\n");
  write("mc/mc0/dimm1/dimm_location", "channel 0 slot 1 \n");  // a second module on channel 0
  write("mc/mc0/dimm2/size", "0\n");
  write("mc/mc0/dimm2/dimm_location", "channel 1 slot 0 \n");  // an empty slot
  write("mc/mc1/dimm0/size", "32768\n");
  write("mc/mc1/dimm0/dimm_location", "channel 0 slot 0 \n");  // the other controller's channel 0
  EXPECT_EQ(edac_populated_channels(path("mc")), 2);
  EXPECT_EQ(edac_populated_channels(path("none")), 0);
}

TEST_F(HostMemoryFiles, TheReasonSaysWhatWasMissing) {
  const HostMemoryPeak missing = discover_host_memory_peak(path("DMI"), path("mc"), false);
  EXPECT_FALSE(missing.peak);
  EXPECT_EQ(missing.unknown, "no SMBIOS tables at " + path("DMI") + " (a VM or container that hides them?)");

  const std::string table = fixture("ddr5_2dimm.bin");
  write("DMI", table);
  const HostMemoryPeak found = discover_host_memory_peak(path("DMI"), path("mc"), false);
  ASSERT_TRUE(found.peak) << found.unknown;
  EXPECT_DOUBLE_EQ(found.peak->gbps, 76.8);

  if (geteuid() != 0) {  // root reads a file whatever its mode
    chmod(path("DMI").c_str(), 0);
    const HostMemoryPeak denied = discover_host_memory_peak(path("DMI"), path("mc"), false);
    EXPECT_EQ(denied.unknown, path("DMI") + " not readable: Permission denied");
  }
}

// dmidecode --dump-bin FILE writes a 32-byte entry point, then the table.
TEST_F(HostMemoryFiles, DmidecodeWhereTheKernelHidesTheTables) {
  const std::string bin = path("bin");
  std::filesystem::create_directories(bin);
  write("bin/dmidecode", "#!/bin/sh\n{ head -c 32 /dev/zero; cat '" + fixture_path("ddr5_2dimm.bin") + "'; } > \"$2\"\n");
  chmod(path("bin/dmidecode").c_str(), 0755);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  setenv("PATH", (bin + ":" + saved).c_str(), 1);
  const HostMemoryPeak via = discover_host_memory_peak(path("DMI"), path("mc"), true);
  ASSERT_TRUE(via.peak) << via.unknown;
  EXPECT_DOUBLE_EQ(via.peak->gbps, 76.8);
  EXPECT_NE(via.peak->source.find("read through dmidecode"), std::string::npos) << via.peak->source;

  write("bin/dmidecode", "#!/bin/sh\nexit 1\n");  // not root: it cannot read them either
  const HostMemoryPeak refused = discover_host_memory_peak(path("DMI"), path("mc"), true);
  setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(refused.peak);
  EXPECT_NE(refused.unknown.find("could not read the tables either (exit 1"), std::string::npos) << refused.unknown;
}

Movement host_copy(std::optional<int> numa) {
  Movement m = movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                                host_memory(numa, Allocator::Pageable), host_memory(numa, Allocator::Pageable));
  m.cache_working_set_per_byte = 2;
  return m;
}

TEST(PeakOfHostMemory, ACopyIsComparedWithHalfTheDramPeak) {
  const HostMemoryPeak dram = host_memory_peak(parse_smbios_memory(fixture("ddr5_2dimm.bin")), 0);
  const PeakAnswer a = peak_of(host_copy(0), 1ull << 30, Topology{}, 32ull << 20, dram);
  EXPECT_TRUE(a.applies);
  EXPECT_DOUBLE_EQ(a.gbps, 38.4);
  EXPECT_NE(a.source.find("/ 2: a copy reads and writes every byte"), std::string::npos) << a.source;
  // In cache, the DRAM peak does not apply.
  EXPECT_EQ(peak_of(host_copy(0), 1ull << 20, Topology{}, 32ull << 20, dram).gbps, 0);
}

TEST(PeakOfHostMemory, TheTrueReasonReachesTheRecord) {
  HostMemoryPeak none;
  none.unknown = "no SMBIOS tables at /sys/firmware/dmi/tables/DMI (a VM or container that hides them?)";
  const PeakAnswer a = peak_of(host_copy(std::nullopt), 1ull << 30, Topology{}, 32ull << 20, none);
  EXPECT_EQ(a.gbps, 0);
  EXPECT_EQ(a.unknown, "no host memory peak: " + none.unknown);
}

TEST(PeakOfHostMemory, ANumaNodeOfAManySocketMachineHasNoWholeMachinePeak) {
  HostMemoryPeak two_sockets = host_memory_peak(parse_smbios_memory(fixture("ddr5_2dimm.bin")), 0);
  two_sockets.arrays = 2;
  const PeakAnswer a = peak_of(host_copy(1), 1ull << 30, Topology{}, 32ull << 20, two_sockets);
  EXPECT_EQ(a.gbps, 0);
  EXPECT_NE(a.unknown.find("NUMA node 1"), std::string::npos) << a.unknown;
}

}  // namespace
}  // namespace commatlas
