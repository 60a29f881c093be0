// NvmlLibrary::traffic() against a stand-in libnvidia-ml (tests/fake_nvml/fake_nvml.c): what it
// asks NVML for on each read, and that the bytes it returns are the counters' bytes.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>

#include "core/wire.h"
#include "topology/nvml_library.h"

namespace commatlas {
namespace {

constexpr const char* kBus = "00000000:18:00.0";

// The stand-in's controls. NvmlLibrary opens the same file, so both see one copy of its state.
struct FakeNvml {
  void* handle = dlopen(COMMATLAS_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  template <typename Fn>
  Fn get(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle, name));
  }
  void reset(int links, bool totals) const { get<void (*)(int, int)>("fake_nvml_reset")(links, totals ? 1 : 0); }
  void move(int link, unsigned long long tx_kib, unsigned long long rx_kib) const {
    get<void (*)(int, unsigned long long, unsigned long long)>("fake_nvml_move")(link, tx_kib, rx_kib);
  }
  long count(const char* what) const { return get<long (*)()>(what)(); }
  ~FakeNvml() {
    if (handle) dlclose(handle);
  }
};

class NvmlTraffic : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(fake.handle, nullptr) << dlerror(); }
  FakeNvml fake;
};

// Driver 580's NVML writes the element behind an NVLink total asked last (the stand-in refuses a
// read that leaves no room there): the read must not end where the engine's buffer ends.
TEST_F(NvmlTraffic, LeavesRoomBehindTheFieldsForWhatTheDriverWritesThere) {
  fake.reset(18, true);
  NvmlLibrary nvml(COMMATLAS_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.detail();
  const GpuWire read = nvml.traffic(0, kBus);
  EXPECT_TRUE(read.nvlink.readable) << read.nvlink.why;
  EXPECT_TRUE(read.pcie.readable) << read.pcie.why;
}

TEST_F(NvmlTraffic, ReadsTheDriversTotalsAndLooksTheLinksUpOnce) {
  fake.reset(18, true);
  NvmlLibrary nvml(COMMATLAS_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.detail();
  fake.move(0, 100, 10);
  fake.move(17, 28, 6);
  const GpuWire before = nvml.traffic(1, kBus);
  fake.move(5, 1000, 2000);
  const GpuWire after = nvml.traffic(1, kBus);

  EXPECT_EQ(before.gpu, 1);
  ASSERT_TRUE(before.nvlink.readable) << before.nvlink.why;
  EXPECT_DOUBLE_EQ(before.nvlink.tx_bytes, 128 * 1024.0);
  EXPECT_DOUBLE_EQ(before.nvlink.rx_bytes, 16 * 1024.0);
  EXPECT_DOUBLE_EQ(after.nvlink.tx_bytes, 1128 * 1024.0);
  EXPECT_DOUBLE_EQ(after.nvlink.rx_bytes, 2016 * 1024.0);
  EXPECT_TRUE(after.nvlink.links.empty());
  EXPECT_TRUE(after.pcie.readable);
  // Two reads of 4 fields each (PCIe and NVLink, tx and rx); 18 link states and one handle, once.
  EXPECT_EQ(fake.count("fake_nvml_field_reads"), 2);
  EXPECT_EQ(fake.count("fake_nvml_fields_asked"), 8);
  EXPECT_EQ(fake.count("fake_nvml_state_queries"), 18);
  EXPECT_EQ(fake.count("fake_nvml_handle_queries"), 1);
}

TEST_F(NvmlTraffic, WithoutTotalsSumsEveryLinkFromTheFirstReadOn) {
  fake.reset(4, false);
  NvmlLibrary nvml(COMMATLAS_FAKE_NVML);
  for (int link = 0; link < 4; ++link) fake.move(link, 10 * (link + 1), 1);
  const GpuWire first = nvml.traffic(0, kBus);
  ASSERT_TRUE(first.nvlink.readable) << first.nvlink.why;
  EXPECT_DOUBLE_EQ(first.nvlink.tx_bytes, 100 * 1024.0);
  EXPECT_DOUBLE_EQ(first.nvlink.rx_bytes, 4 * 1024.0);
  ASSERT_EQ(first.nvlink.links.size(), 4u);
  EXPECT_EQ(first.nvlink.links[3].id, 3);
  EXPECT_DOUBLE_EQ(first.nvlink.links[3].tx_bytes, 40 * 1024.0);
  // The first read asked for the totals (4 fields), learnt the driver has none and asked for each
  // link (2 + 8); the next asks for each link straight away.
  EXPECT_EQ(fake.count("fake_nvml_fields_asked"), 4 + 10);
  const GpuWire second = nvml.traffic(0, kBus);
  EXPECT_EQ(fake.count("fake_nvml_field_reads"), 3);
  EXPECT_EQ(fake.count("fake_nvml_fields_asked"), 4 + 10 + 10);
  EXPECT_DOUBLE_EQ(second.nvlink.tx_bytes, first.nvlink.tx_bytes);
}

TEST_F(NvmlTraffic, AGpuWithoutNvlinkReadsPcieOnly) {
  fake.reset(0, true);
  NvmlLibrary nvml(COMMATLAS_FAKE_NVML);
  const GpuWire w = nvml.traffic(0, kBus);
  EXPECT_TRUE(w.pcie.readable);
  EXPECT_FALSE(w.nvlink.readable);
  EXPECT_EQ(w.nvlink.why, "no active NVLink");
  EXPECT_EQ(fake.count("fake_nvml_fields_asked"), 2);
}

TEST_F(NvmlTraffic, AnUnknownGpuIsUnreadableAndIsNotAskedAgain) {
  fake.reset(18, true);
  NvmlLibrary nvml(COMMATLAS_FAKE_NVML);
  for (int i = 0; i < 2; ++i) {
    const GpuWire w = nvml.traffic(2, "00000000:99:00.0");
    EXPECT_FALSE(w.nvlink.readable);
    EXPECT_FALSE(w.pcie.readable);
    EXPECT_NE(w.pcie.why.find("does not know the GPU"), std::string::npos) << w.pcie.why;
  }
  EXPECT_EQ(fake.count("fake_nvml_handle_queries"), 1);
  EXPECT_EQ(fake.count("fake_nvml_field_reads"), 0);
}

}  // namespace
}  // namespace commatlas
