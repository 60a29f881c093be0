/* A stand-in for libnvidia-ml.so.1, for engine/tests/nvml_library_test.cpp: the few entry points
 * NvmlLibrary::traffic() calls, with NVLink and PCIe counters that the test moves, and a count of
 * what the engine asked for. Layouts follow the NVML API reference, as nvml_library.cpp declares
 * them. One GPU, bus id "00000000:18:00.0". */
#include <malloc.h>
#include <string.h>

enum { kSuccess = 0, kNotSupported = 3, kNotFound = 6, kNoRoomBehind = 999 };
enum { kFieldNvlinkTx = 138, kFieldNvlinkRx = 139, kFieldPcieTx = 197, kFieldPcieRx = 198 };
enum { kValueUnsignedLongLong = 3 };
#define ALL_LINKS 0xffffffffu
#define MAX_LINKS 18

typedef struct {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  int nvmlReturn;
  union {
    double dVal;
    unsigned uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
  } value;
} FieldValue;

static int the_gpu;  /* its address is the device handle */
static const char kBusId[] = "00000000:18:00.0";

/* The state the test sets and reads (fake_nvml_* below). */
static int active_links = MAX_LINKS;
static int totals_supported = 1;
static unsigned long long link_tx_kib[MAX_LINKS], link_rx_kib[MAX_LINKS];
static unsigned long long pcie_tx, pcie_rx;
static long field_reads, fields_asked, state_queries, handle_queries;

void fake_nvml_reset(int links, int totals) {
  active_links = links;
  totals_supported = totals;
  memset(link_tx_kib, 0, sizeof link_tx_kib);
  memset(link_rx_kib, 0, sizeof link_rx_kib);
  pcie_tx = pcie_rx = 0;
  field_reads = fields_asked = state_queries = handle_queries = 0;
}
/* Traffic on link `link`: KiB sent and received. */
void fake_nvml_move(int link, unsigned long long tx_kib, unsigned long long rx_kib) {
  link_tx_kib[link] += tx_kib;
  link_rx_kib[link] += rx_kib;
}
long fake_nvml_field_reads(void) { return field_reads; }
long fake_nvml_fields_asked(void) { return fields_asked; }
long fake_nvml_state_queries(void) { return state_queries; }
long fake_nvml_handle_queries(void) { return handle_queries; }

int nvmlInit_v2(void) { return kSuccess; }
int nvmlShutdown(void) { return kSuccess; }
const char* nvmlErrorString(int rc) {
  if (rc == kNoRoomBehind) return "no room behind the values for the element driver 580 writes there";
  return rc == kNotSupported ? "Not Supported" : "fake NVML error";
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** dev) {
  ++handle_queries;
  if (strcmp(bus_id, kBusId) != 0) return kNotFound;
  *dev = &the_gpu;
  return kSuccess;
}

int nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  (void)dev;
  ++state_queries;
  if (link >= MAX_LINKS) return kNotSupported;
  *active = (int)link < active_links;
  return kSuccess;
}

static unsigned long long sum(const unsigned long long* per_link) {
  unsigned long long s = 0;
  for (int l = 0; l < active_links; ++l) s += per_link[l];
  return s;
}

int nvmlDeviceGetFieldValues(void* dev, int count, FieldValue* values) {
  (void)dev;
  ++field_reads;
  fields_asked += count;
  /* As driver 580's NVML does after an NVLink throughput total asked last (three core dumps on
   * 2x H100): the element behind the array gets its timestamp and latency too. Where the caller
   * left no room there, that would be the next heap chunk's header; here it is refused. */
  const int spills = count > 0 && values[count - 1].scopeId == ALL_LINKS &&
                     (values[count - 1].fieldId == kFieldNvlinkTx || values[count - 1].fieldId == kFieldNvlinkRx);
  if (spills && malloc_usable_size(values) < (size_t)(count + 1) * sizeof(FieldValue)) return kNoRoomBehind;
  for (int i = 0; i < count; ++i) {
    FieldValue* f = &values[i];
    f->valueType = kValueUnsignedLongLong;
    f->nvmlReturn = kSuccess;
    const int nvlink = f->fieldId == kFieldNvlinkTx || f->fieldId == kFieldNvlinkRx;
    const unsigned long long* per_link = f->fieldId == kFieldNvlinkTx ? link_tx_kib : link_rx_kib;
    if (f->fieldId == kFieldPcieTx) {
      f->value.ullVal = pcie_tx;
    } else if (f->fieldId == kFieldPcieRx) {
      f->value.ullVal = pcie_rx;
    } else if (nvlink && f->scopeId == ALL_LINKS) {
      if (totals_supported)
        f->value.ullVal = sum(per_link);
      else
        f->nvmlReturn = kNotSupported;
    } else if (nvlink && (int)f->scopeId < active_links) {
      f->value.ullVal = per_link[f->scopeId];
    } else {
      f->nvmlReturn = kNotSupported;
    }
    f->timestamp = 1795830131586914LL + i;
    f->latencyUsec = 330;
  }
  if (spills) {
    FieldValue* behind = &values[count];
    behind->timestamp = values[count - 1].timestamp;
    behind->latencyUsec = values[count - 1].latencyUsec;
    behind->valueType = 0;
    behind->nvmlReturn = kSuccess;
    behind->value.ullVal = 0;
  }
  return kSuccess;
}
