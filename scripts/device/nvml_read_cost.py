"""What one read of the wire check's NVML counters costs (nvmlDeviceGetFieldValues): the PCIe byte
counters and NVLink data totals alone (4 fields), and with every active link's pair as the engine
reads them (4 + 2 per link), 20 reads each, per GPU. Also the per-link state lookups (18 calls).
    python3 scripts/device/nvml_read_cost.py
"""
import ctypes
import statistics
import time


class Value(ctypes.Union):
    _fields_ = [("d", ctypes.c_double), ("ui", ctypes.c_uint), ("ul", ctypes.c_ulong), ("ull", ctypes.c_ulonglong),
                ("sll", ctypes.c_longlong), ("si", ctypes.c_int), ("us", ctypes.c_ushort)]


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", Value)]


nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
count = ctypes.c_uint()
nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
for index in range(count.value):
    dev = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(dev))
    t = time.perf_counter()
    links = []
    for link in range(18):
        state = ctypes.c_int()
        if nvml.nvmlDeviceGetNvLinkState(dev, link, ctypes.byref(state)) == 0 and state.value == 1:
            links.append(link)
    states_ms = (time.perf_counter() - t) * 1e3
    def fields(per_link):
        ids = [(197, 0), (198, 0), (138, 0xFFFFFFFF), (139, 0xFFFFFFFF)]
        if per_link:
            ids += [(f, link) for link in links for f in (138, 139)]
        # Two spare elements: driver 580 writes one behind an NVLink total asked last
        # (engine/topology/nvml_library.cpp, read_fields).
        arr = (FieldValue * (len(ids) + 2))()
        for k, (f, s) in enumerate(ids):
            arr[k].fieldId, arr[k].scopeId = f, s
        return arr, len(ids)
    for per_link in (False, True):
        arr, n = fields(per_link)
        took = []
        for _ in range(20):
            t = time.perf_counter()
            nvml.nvmlDeviceGetFieldValues(dev, n, arr)
            took.append((time.perf_counter() - t) * 1e3)
        print(f"GPU {index}: {n:2d} fields: median {statistics.median(took):.2f} ms, max {max(took):.2f} ms"
              f" ({len(links)} active links; their 18 state lookups {states_ms:.2f} ms)")
