#include "topology/nvml_library.h"

#include <dlfcn.h>

#include <cstring>

namespace commatlas {
namespace {

// The few NVML types we use, declared here so that building needs no nvml.h (layouts from the
// NVML API reference; they have been stable across the _v2/_v3 entry points named below).
using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;
constexpr int NVML_FEATURE_ENABLED = 1;
constexpr int NVML_NVLINK_DEVICE_TYPE_GPU = 0x00;
constexpr int NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02;
constexpr unsigned NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 = 84;      // MB/s, link 0
constexpr unsigned NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90;  // MB/s, common to all active links
constexpr int NVML_VALUE_TYPE_DOUBLE = 0, NVML_VALUE_TYPE_UNSIGNED_INT = 1, NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
              NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

union nvmlValue_t {
  double dVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};

struct nvmlFieldValue_t {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

double field_as_double(const nvmlFieldValue_t& f) {
  switch (f.valueType) {
    case NVML_VALUE_TYPE_DOUBLE: return f.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return f.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(f.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(f.value.ullVal);
    default: return 0;
  }
}

int close_library(void* handle) { return handle ? dlclose(handle) : 0; }

}  // namespace

struct NvmlLibrary::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvml_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*handle_by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*pcie_gen_current)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width_current)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, int*) = nullptr;  // newer drivers only
  nvmlReturn_t (*nvlink_version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;

  std::string error(nvmlReturn_t rc) const {
    return error_string ? error_string(rc) : "NVML error " + std::to_string(rc);
  }
  // NVML answers NOT_SUPPORTED for many queries on many GPUs: a failed query is an unknown fact,
  // never an error, so every query goes through this one check.
  template <typename Fn, typename... Args>
  bool ask(Fn fn, Args... args) const {
    return fn && fn(args...) == NVML_SUCCESS;
  }
};

namespace {

template <typename Fn>
void resolve(void* handle, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

}  // namespace

NvmlLibrary::NvmlLibrary() : handle_(nullptr, close_library), api_(std::make_unique<Api>()) {
  dlerror();
  handle_.reset(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!handle_) {
    const char* why = dlerror();
    detail_ = std::string("libnvidia-ml.so.1 not loadable (no NVIDIA driver?): ") + (why ? why : "unknown");
    return;
  }
  Api& a = *api_;
  void* h = handle_.get();
  resolve(h, a.init, "nvmlInit_v2");
  resolve(h, a.shutdown, "nvmlShutdown");
  resolve(h, a.error_string, "nvmlErrorString");
  resolve(h, a.nvml_version, "nvmlSystemGetNVMLVersion");
  resolve(h, a.driver_version, "nvmlSystemGetDriverVersion");
  resolve(h, a.handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  resolve(h, a.pcie_gen_current, "nvmlDeviceGetCurrPcieLinkGeneration");
  resolve(h, a.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  resolve(h, a.pcie_width_current, "nvmlDeviceGetCurrPcieLinkWidth");
  resolve(h, a.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  resolve(h, a.nvlink_state, "nvmlDeviceGetNvLinkState");
  resolve(h, a.nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  resolve(h, a.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  resolve(h, a.nvlink_version, "nvmlDeviceGetNvLinkVersion");
  resolve(h, a.field_values, "nvmlDeviceGetFieldValues");
  if (!a.init || !a.shutdown || !a.handle_by_bus_id) {
    detail_ = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlShutdown/nvmlDeviceGetHandleByPciBusId_v2 (driver too old)";
    return;
  }
  const nvmlReturn_t rc = a.init();
  if (rc != NVML_SUCCESS) {
    detail_ = "nvmlInit_v2 failed: " + a.error(rc);
    return;
  }
  available_ = true;
  char nvml[96] = {}, driver[96] = {};
  detail_ = a.ask(a.nvml_version, nvml, unsigned{sizeof nvml}) ? nvml : "version unknown";
  if (a.ask(a.driver_version, driver, unsigned{sizeof driver})) detail_ += std::string(", driver ") + driver;
}

NvmlLibrary::~NvmlLibrary() {
  if (available_) api_->shutdown();
}

void NvmlLibrary::describe(GpuAnswers& gpu) const {
  if (!available_) return;
  const Api& a = *api_;
  nvmlDevice_t dev = nullptr;
  if (!a.ask(a.handle_by_bus_id, gpu.info.pci_bus_id.c_str(), &dev)) return;
  gpu.nvml_answered = true;

  unsigned gen_cur = 0, gen_max = 0, width_cur = 0, width_max = 0;
  if (a.ask(a.pcie_gen_max, dev, &gen_max) && a.ask(a.pcie_width_max, dev, &width_max)) {
    a.ask(a.pcie_gen_current, dev, &gen_cur);
    a.ask(a.pcie_width_current, dev, &width_cur);
    gpu.info.pcie = PcieLink{static_cast<int>(gen_cur), static_cast<int>(gen_max), static_cast<int>(width_cur),
                             static_cast<int>(width_max), 0, "NVML"};
  }

  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    int active = 0;
    if (!a.ask(a.nvlink_state, dev, link, &active) || active != NVML_FEATURE_ENABLED) continue;
    nvmlPciInfo_t remote{};
    if (!a.ask(a.nvlink_remote_pci, dev, link, &remote)) continue;
    NvlinkAnswer answer;
    answer.remote_bus_id = canonical_bus_id(remote.busId);
    int type = -1;
    nvmlDevice_t remote_dev = nullptr;
    if (a.ask(a.nvlink_remote_type, dev, link, &type) &&
        (type == NVML_NVLINK_DEVICE_TYPE_GPU || type == NVML_NVLINK_DEVICE_TYPE_SWITCH))
      answer.remote = type == NVML_NVLINK_DEVICE_TYPE_SWITCH ? LinkRemote::Switch : LinkRemote::Gpu;
    else  // older drivers: a far end that NVML does not know as a GPU is an NVSwitch
      answer.remote = a.ask(a.handle_by_bus_id, remote.busId, &remote_dev) ? LinkRemote::Gpu : LinkRemote::Switch;
    gpu.nvlinks.push_back(answer);
    unsigned version = 0;
    if (gpu.nvml_nvlink_version == 0 && a.ask(a.nvlink_version, dev, link, &version))
      gpu.nvml_nvlink_version = static_cast<int>(version);
  }
  if (gpu.nvlinks.empty()) return;

  for (unsigned field : {NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, NVML_FI_DEV_NVLINK_SPEED_MBPS_L0}) {
    nvmlFieldValue_t value{};
    value.fieldId = field;
    if (a.ask(a.field_values, dev, 1, &value) && value.nvmlReturn == NVML_SUCCESS && field_as_double(value) > 0) {
      gpu.nvlink_speed_gbps = field_as_double(value) / 1000.0;  // MB/s -> GB/s
      break;
    }
  }
}

}  // namespace commatlas
