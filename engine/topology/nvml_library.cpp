#include "topology/nvml_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

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
// Traffic counters (nvml.h: "NVLink throughput counters field values"; scopeId is the link, UINT_MAX
// the sum over links). The NVLink ones count KiB of payload, without protocol overhead; the PCIe
// ones bytes, and "can be wrapped" (R555 and later).
constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;
constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;
constexpr unsigned NVML_FI_DEV_PCIE_COUNT_TX_BYTES = 197;
constexpr unsigned NVML_FI_DEV_PCIE_COUNT_RX_BYTES = 198;
constexpr unsigned kAllLinks = UINT_MAX;
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

// A counter's value and how wide it is (a 32-bit counter wraps after 2^32 of its units).
bool field_as_counter(const nvmlFieldValue_t& f, double& value, double& wrap_units) {
  switch (f.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT: value = f.value.uiVal; wrap_units = 4294967296.0; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: value = static_cast<double>(f.value.ulVal); wrap_units = sizeof(unsigned long) >= 8 ? 0 : 4294967296.0; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: value = static_cast<double>(f.value.ullVal); wrap_units = 0; return true;
    default: return false;
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

  // What traffic() learns of a GPU on its first read and keeps for the run.
  struct CounterSource {
    nvmlDevice_t dev = nullptr;    // null: NVML does not know the GPU
    std::vector<unsigned> links;   // the active NVLinks
    std::string totals_why;        // empty: the driver's NVLink totals read; else why not
  };
  std::map<std::string, CounterSource> counters;  // by PCI bus id
  std::mutex counters_lock;

  std::string error(nvmlReturn_t rc) const {
    return error_string ? error_string(rc) : "NVML error " + std::to_string(rc);
  }
  // nvmlDeviceGetFieldValues for `fields` (fieldId and scopeId set), read into a buffer with
  // kSpareFields elements of room behind them. Driver 580's NVML writes the element after an
  // NVLink throughput total as well: three engines on 2x H100 died freeing a heap chunk whose
  // size field held that total's timestamp, the 40 bytes behind a 4-field read ending with it
  // (results/nvidia-h100-x2/figures-that-hold-19, heap-hunt). nullopt: no such entry point.
  static constexpr std::size_t kSpareFields = 2;
  std::optional<nvmlReturn_t> read_fields(nvmlDevice_t dev, std::vector<nvmlFieldValue_t>& fields) const {
    if (!field_values) return std::nullopt;
    const std::size_t asked = fields.size();
    fields.resize(asked + kSpareFields);
    const nvmlReturn_t rc = field_values(dev, static_cast<int>(asked), fields.data());
    fields.resize(asked);
    return rc;
  }
  // The NVLinks NVML says are up on `dev` (one state query per possible link).
  std::vector<unsigned> active_links(nvmlDevice_t dev) const {
    std::vector<unsigned> links;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      int active = 0;
      if (ask(nvlink_state, dev, link, &active) && active == NVML_FEATURE_ENABLED) links.push_back(link);
    }
    return links;
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

NvmlLibrary::NvmlLibrary(const char* path) : handle_(nullptr, close_library), api_(std::make_unique<Api>()) {
  dlerror();
  handle_.reset(dlopen(path, RTLD_NOW | RTLD_LOCAL));
  if (!handle_) {
    const char* why = dlerror();
    detail_ = std::string(path) + " not loadable (no NVIDIA driver?): " + (why ? why : "unknown");
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
    detail_ = std::string(path) + " lacks nvmlInit_v2/nvmlShutdown/nvmlDeviceGetHandleByPciBusId_v2 (driver too old)";
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

  for (unsigned link : a.active_links(dev)) {
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
    std::vector<nvmlFieldValue_t> values(1);
    values[0].fieldId = field;
    if (a.read_fields(dev, values) == NVML_SUCCESS && values[0].nvmlReturn == NVML_SUCCESS &&
        field_as_double(values[0]) > 0) {
      gpu.nvlink_speed_gbps = field_as_double(values[0]) / 1000.0;  // MB/s -> GB/s
      break;
    }
  }
}

}  // namespace commatlas

namespace commatlas {

GpuWire NvmlLibrary::traffic(int gpu, const std::string& bus_id) const {
  GpuWire out;
  out.gpu = gpu;
  auto unreadable = [&](const std::string& why) {
    out.nvlink.why = why;
    out.pcie.why = why;
    return out;
  };
  if (!available_) return unreadable(detail_);
  Api& a = *api_;
  if (!a.field_values) return unreadable("this NVML lacks nvmlDeviceGetFieldValues (" + detail_ + ")");

  // The handle and the active links are looked up once per GPU and run: the 18 link-state queries
  // cost as much as a read of every counter, and a wire check reads 2-4 times around each pass.
  std::lock_guard<std::mutex> hold(a.counters_lock);
  auto known = a.counters.find(bus_id);
  if (known == a.counters.end()) {
    Api::CounterSource source;
    if (a.ask(a.handle_by_bus_id, bus_id.c_str(), &source.dev)) source.links = a.active_links(source.dev);
    known = a.counters.emplace(bus_id, std::move(source)).first;
  }
  Api::CounterSource& source = known->second;
  if (!source.dev) return unreadable("NVML does not know the GPU at " + bus_id);

  for (;;) {
    // One call for every counter, so that they are read as close together as NVML allows. The
    // driver's NVLink totals are 2 fields; every link's pair would be 36 more on 18 links and makes
    // a read 4x slower, so the links are read one by one only where the driver has no total.
    const bool nvlink = !source.links.empty();
    std::vector<nvmlFieldValue_t> fields;
    auto ask_field = [&](unsigned id, unsigned scope) {
      nvmlFieldValue_t f{};
      f.fieldId = id;
      f.scopeId = scope;
      fields.push_back(f);
    };
    ask_field(NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0);
    ask_field(NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0);
    if (nvlink && source.totals_why.empty()) {
      ask_field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, kAllLinks);
      ask_field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, kAllLinks);
    } else if (nvlink) {
      for (unsigned link : source.links) {
        ask_field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, link);
        ask_field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, link);
      }
    }
    const nvmlReturn_t rc = *a.read_fields(source.dev, fields);  // field_values was found (above)
    if (rc != NVML_SUCCESS) return unreadable("nvmlDeviceGetFieldValues: " + a.error(rc));

    // A pair of fields (tx, rx) in units of `unit` bytes, or why not.
    auto pair = [&](std::size_t at, double unit, const char* what, double& tx, double& rx, double& wrap) -> std::string {
      double wrap_tx = 0, wrap_rx = 0;
      for (std::size_t k = at; k < at + 2; ++k)
        if (fields[k].nvmlReturn != NVML_SUCCESS)
          return std::string(what) + " field " + std::to_string(fields[k].fieldId) + ": " + a.error(fields[k].nvmlReturn);
      if (!field_as_counter(fields[at], tx, wrap_tx) || !field_as_counter(fields[at + 1], rx, wrap_rx))
        return std::string(what) + " fields: value type " + std::to_string(fields[at].valueType) + " is not a counter";
      tx *= unit;
      rx *= unit;
      const double w = wrap_tx > 0 && (wrap_rx == 0 || wrap_tx < wrap_rx) ? wrap_tx : wrap_rx;
      wrap = w * unit;
      return "";
    };

    out.pcie.why = pair(0, 1.0, "PCIe byte counter", out.pcie.tx_bytes, out.pcie.rx_bytes, out.pcie.wrap_bytes);
    out.pcie.readable = out.pcie.why.empty();

    if (!nvlink) {
      out.nvlink.why = "no active NVLink";
      return out;
    }
    constexpr double kKiB = 1024.0;
    if (source.totals_why.empty()) {
      const std::string why =
          pair(2, kKiB, "NVLink data (all links)", out.nvlink.tx_bytes, out.nvlink.rx_bytes, out.nvlink.wrap_bytes);
      if (why.empty()) {
        out.nvlink.readable = true;
        return out;
      }
      // No total from this driver: this read and every later one of this GPU (the first read of a
      // run comes before any pass, so before and after are read alike) ask for each link instead.
      source.totals_why = why;
      out = GpuWire{};
      out.gpu = gpu;
      continue;
    }
    double link_wrap = 0;
    for (std::size_t i = 0; i < source.links.size(); ++i) {
      WireCounter::Link l;
      l.id = static_cast<int>(source.links[i]);
      double wrap = 0;
      if (pair(2 + 2 * i, kKiB, "NVLink data", l.tx_bytes, l.rx_bytes, wrap).empty()) {
        out.nvlink.links.push_back(l);
        link_wrap = std::max(link_wrap, wrap);
      }
    }
    // The links' sum stands for the total where every link answered and none wraps (a sum of
    // wrapping counters cannot be unwrapped).
    if (out.nvlink.links.size() == source.links.size() && link_wrap == 0) {
      for (const WireCounter::Link& l : out.nvlink.links) {
        out.nvlink.tx_bytes += l.tx_bytes;
        out.nvlink.rx_bytes += l.rx_bytes;
      }
      out.nvlink.readable = true;
    } else {
      out.nvlink.why = source.totals_why;
    }
    return out;
  }
}

}  // namespace commatlas
