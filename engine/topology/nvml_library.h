// NVML, loaded at run time: the engine must start (and run every non-GPU benchmark) on machines
// without the NVIDIA driver, so nothing links against libnvidia-ml.
#pragma once

#include <memory>
#include <string>

#include "core/wire.h"
#include "topology/answers.h"

namespace commatlas {

class NvmlLibrary {
 public:
  // dlopen + nvmlInit_v2; never throws: available() says whether it worked. Tests name a stand-in
  // library (engine/tests/fake_nvml/).
  explicit NvmlLibrary(const char* path = "libnvidia-ml.so.1");
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  bool available() const { return available_; }
  const std::string& detail() const { return detail_; }  // "12.570.124.06, driver 570.124.06", or why NVML is unavailable

  // PCIe generation/width and active NVLinks of the GPU at gpu.info.pci_bus_id; leaves the answers
  // untouched (nvml_answered false) when NVML does not know that GPU.
  void describe(GpuAnswers& gpu) const;

  // Cumulative traffic counters of the GPU at `bus_id` (field values): NVLink data bytes sent and
  // received over all active links (each link's, summed, only where the driver has no total), and
  // PCIe bytes where the driver has them (R555+). A class that cannot be read says what NVML
  // answered. `gpu` is copied into the result. The GPU's handle and active links are looked up on
  // its first read and kept.
  GpuWire traffic(int gpu, const std::string& bus_id) const;

  struct Api;  // the resolved entry points

 private:
  std::unique_ptr<void, int (*)(void*)> handle_;
  std::unique_ptr<Api> api_;
  bool available_ = false;
  std::string detail_;
};

}  // namespace commatlas
