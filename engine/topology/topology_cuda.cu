// Discovery with the CUDA runtime (devices, peers), NVML (links) and sysfs (NUMA, PCIe).
// On the HIP build (AMD): the HIP runtime (devices, peers) and the KFD topology in sysfs (xGMI links,
// kfd.h) instead of NVML. rocm-smi/amd-smi are not asked: KFD has the link counts they report.
#include <exception>

#include "backends/cuda/gpu_runtime.h"
#include "topology/answers.h"
#include "topology/sysfs.h"
#ifdef COMMATLAS_HIP
#include "topology/kfd.h"
#else
#include "topology/nvml_library.h"
#endif

namespace commatlas {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

GpuAnswers ask_gpu(int device) {
  GpuAnswers a;
  GpuInfo& g = a.info;
  g.index = device;
  cudaDeviceProp prop{};
  COMMATLAS_GPU_CHECK(cudaGetDeviceProperties(&prop, device));
  g.name = prop.name;
  g.memory_bytes = prop.totalGlobalMem;
  char bus_id[32] = {};
  COMMATLAS_GPU_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  g.pci_bus_id = canonical_bus_id(bus_id);
  a.compute_major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  a.compute_minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  g.sm_count = attribute(cudaDevAttrMultiProcessorCount, device);
  // CUDA 13 dropped these from cudaDeviceProp; the attributes remain.
  g.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device) / 1000;  // kHz
  g.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
  g.copy_engines = attribute(cudaDevAttrAsyncEngineCount, device);
  g.l2_cache_bytes = static_cast<std::uint64_t>(attribute(cudaDevAttrL2CacheSize, device));
  g.pageable_memory_access = attribute(cudaDevAttrPageableMemoryAccess, device) != 0;
  g.concurrent_managed_access = attribute(cudaDevAttrConcurrentManagedAccess, device) != 0;
  return a;
}

PeerAnswer ask_peer(int src, int dst) {
  PeerAnswer p;
  p.src = src;
  p.dst = dst;
  int can = 0, atomics = 0;
  COMMATLAS_GPU_CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
  COMMATLAS_GPU_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, src, dst));
  p.can_access = can != 0;
  p.native_atomics = atomics != 0;
  return p;
}

TopologyAnswers ask_node() {
  TopologyAnswers answers;
#ifdef COMMATLAS_HIP
  const KfdTopology kfd = read_kfd_topology();
  answers.nvml_detail = kfd.error.empty() ? std::string("not used on AMD: links from the KFD topology (") + kKfdTopologyDir + ")"
                                          : "not used on AMD; the KFD topology is unreadable: " + kfd.error;
#else
  const NvmlLibrary nvml;
  answers.nvml_available = nvml.available();
  answers.nvml_detail = nvml.detail();
#endif

  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    answers.no_gpu_reason = cuda::no_device_reason(rc, count);
    return answers;
  }
  for (int d = 0; d < count; ++d) {
    GpuAnswers gpu = ask_gpu(d);
#ifdef COMMATLAS_HIP
    if (describe_from_kfd(kfd, gpu)) answers.kfd_available = true;
#else
    nvml.describe(gpu);
#endif
    read_pci_sysfs(gpu.info);
    answers.gpus.push_back(gpu);
  }
  for (int src = 0; src < count; ++src)
    for (int dst = 0; dst < count; ++dst)
      if (src != dst) answers.peers.push_back(ask_peer(src, dst));
  return answers;
}

Topology discover() {
  try {
    return build_topology(ask_node());
  } catch (const std::exception& e) {
    Topology empty;
    empty.source = "cuda_runtime";
    empty.no_gpu_reason = std::string("topology discovery failed: ") + e.what();
    return empty;
  }
}

}  // namespace

const Topology& gpu_topology() {
  static const Topology topology = discover();  // C++11 makes this initialisation thread-safe
  return topology;
}

}  // namespace commatlas
