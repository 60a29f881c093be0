// What Linux says about a PCI device: NUMA node, local CPUs, PCIe link (no library needed).
#pragma once

#include <string>

#include "topology/topology.h"

namespace commatlas {

constexpr const char* kPciDevicesDir = "/sys/bus/pci/devices";

// Fills numa_node, cpu_affinity and, where NVML has not, the PCIe generation and width of the GPU
// at info.pci_bus_id (canonical form). Missing files leave the fields as they were.
void read_pci_sysfs(GpuInfo& info, const std::string& devices_dir = kPciDevicesDir);

// "32.0 GT/s PCIe" -> 5; 0 when not a known PCIe rate.
int pcie_generation_of_speed(const std::string& speed);

}  // namespace commatlas
