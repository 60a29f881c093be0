// The HIP spelling of every CUDA runtime name the engine uses, for the HIP build (AMD GPUs).
//
// HIP's runtime API is CUDA's name for name, so the engine keeps one source: gpu_runtime.h
// includes this header instead of <cuda_runtime.h> when COMMATLAS_HIP is defined. Where HIP
// differs in more than the name (CUDA 13's cudaMemLocation for prefetch and advice, errors HIP
// does not have), a small adapter below keeps the CUDA call shape.
// tests/test_hip_build.py checks that every cuda* name used under engine/ is covered here.
#pragma once

#include <hip/hip_runtime.h>

#define cudaDevAttrAsyncEngineCount hipDeviceAttributeAsyncEngineCount
#define cudaDevAttrComputeCapabilityMajor hipDeviceAttributeComputeCapabilityMajor
#define cudaDevAttrComputeCapabilityMinor hipDeviceAttributeComputeCapabilityMinor
#define cudaDevAttrConcurrentManagedAccess hipDeviceAttributeConcurrentManagedAccess
#define cudaDevAttrGlobalMemoryBusWidth hipDeviceAttributeMemoryBusWidth
#define cudaDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDevAttrPageableMemoryAccess hipDeviceAttributePageableMemoryAccess
#define cudaDevP2PAttrNativeAtomicSupported hipDevP2PAttrNativeAtomicSupported
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDeviceCanAccessPeer hipDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceGetP2PAttribute hipDeviceGetP2PAttribute
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaErrorAssert hipErrorAssert
#define cudaErrorECCUncorrectable hipErrorECCNotCorrectable
#define cudaErrorIllegalAddress hipErrorIllegalAddress
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorLaunchFailure hipErrorLaunchFailure
#define cudaErrorLaunchTimeout hipErrorLaunchTimeOut
#define cudaErrorMemoryAllocation hipErrorMemoryAllocation
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define cudaError_t hipError_t
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDefault hipEventDefault
#define cudaEventDestroy hipEventDestroy
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaFreeAsync hipFreeAsync
#define cudaFreeHost hipHostFree
#define cudaFuncAttributes hipFuncAttributes
#define cudaFuncGetAttributes hipFuncGetAttributes
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphInstantiate hipGraphInstantiateWithFlags  // CUDA 12+: (exec, graph, flags)
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphUpload hipGraphUpload
#define cudaGraph_t hipGraph_t
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocMapped hipHostMallocMapped
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaHostGetDevicePointer hipHostGetDevicePointer
#define cudaHostRegister hipHostRegister
#define cudaHostRegisterMapped hipHostRegisterMapped
#define cudaHostRegisterPortable hipHostRegisterPortable
#define cudaHostUnregister hipHostUnregister
#define cudaIpcCloseMemHandle hipIpcCloseMemHandle
#define cudaIpcGetMemHandle hipIpcGetMemHandle
#define cudaIpcMemHandle_t hipIpcMemHandle_t
#define cudaIpcMemLazyEnablePeerAccess hipIpcMemLazyEnablePeerAccess
#define cudaIpcOpenMemHandle hipIpcOpenMemHandle
#define cudaLaunchCooperativeKernel hipLaunchCooperativeKernel
#define cudaMalloc hipMalloc
#define cudaMallocAsync hipMallocAsync
#define cudaMallocManaged hipMallocManaged
#define cudaMemAdviseSetAccessedBy hipMemAdviseSetAccessedBy
#define cudaMemAdviseSetPreferredLocation hipMemAdviseSetPreferredLocation
#define cudaMemAttachGlobal hipMemAttachGlobal
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaSetDevice hipSetDevice
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaStream_t hipStream_t
#define cudaSuccess hipSuccess

// CUDA 13 names where managed pages go with a cudaMemLocation; HIP takes a device number, with
// hipCpuDeviceId for host memory.
enum cudaMemLocationType { cudaMemLocationTypeDevice = 1, cudaMemLocationTypeHost = 2 };
struct cudaMemLocation {
  cudaMemLocationType type = cudaMemLocationTypeDevice;
  int id = 0;
};
inline int commatlas_hip_device_of(const cudaMemLocation& l) {
  return l.type == cudaMemLocationTypeHost ? hipCpuDeviceId : l.id;
}
inline hipError_t cudaMemAdvise(const void* ptr, size_t bytes, hipMemoryAdvise advice, cudaMemLocation where) {
  return hipMemAdvise(ptr, bytes, advice, commatlas_hip_device_of(where));
}
inline hipError_t cudaMemPrefetchAsync(const void* ptr, size_t bytes, cudaMemLocation where, unsigned /*flags*/,
                                       hipStream_t stream) {
  return hipMemPrefetchAsync(ptr, bytes, commatlas_hip_device_of(where), stream);
}

// Sticky errors CUDA names and HIP 5.2 does not: values no HIP call returns, so the sticky-error
// switch in gpu_runtime.cpp compiles unchanged and simply never sees them.
#define cudaErrorHardwareStackError static_cast<hipError_t>(-10001)
#define cudaErrorIllegalInstruction static_cast<hipError_t>(-10002)
#define cudaErrorInvalidAddressSpace static_cast<hipError_t>(-10003)
#define cudaErrorInvalidPc static_cast<hipError_t>(-10004)
#define cudaErrorMisalignedAddress static_cast<hipError_t>(-10005)
