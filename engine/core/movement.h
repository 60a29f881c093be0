// The movement model: what a record measured, declared by the engine once and read by every
// consumer (report, best-interface map, compare, schema) instead of guessed from parameter names.
//
// A movement says *from where* and *to where* the bytes went (each endpoint's place: host or GPU
// memory where the bytes are while timed, which GPU, NUMA node, node and rank), *what happens*
// (the operation and its direction) and *how* (the mechanism, from one closed list, plus the
// choices a user can make: the allocator and first touch of each buffer, recorded on the endpoint,
// and everything else in `choices`).
//
// The vocabularies below are X-macro tables: each value's record name and a one-line meaning,
// written once. `commatlas-engine vocabulary` prints them; the schema's enums and the table in
// docs/results-format.md are checked against that output in a test, so the engine is the one
// source of these names.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/params.h"

namespace commatlas {

// clang-format off
// Operations: record name, kind (OperationKind: who takes part), the directions it may have, and
// its meaning.
#define COMMATLAS_OPERATIONS(X)                                                                    \
  X(Copy,          "copy",           Transfer,   "uni bi one_to_all all_to_one", "bytes copied from one buffer into another") \
  X(Read,          "read",           Access,     "uni",             "a processor loads a buffer (STREAM read)")                    \
  X(Write,         "write",          Access,     "uni",             "a processor stores into a buffer (STREAM write)")             \
  X(LoadLatency,   "load_latency",   Access,     "uni",             "dependent loads, one at a time (pointer chase)")              \
  X(SendRecv,      "send_recv",      Message,    "uni bi",          "one process sends a message, another receives it")            \
  X(PingPong,      "ping_pong",      Message,    "half_round_trip", "a message to a peer and back, the next sent after the reply")\
  X(Allreduce,     "allreduce",      Collective, "all_to_all",      "collective: every rank gets the reduction of all buffers")    \
  X(Allgather,     "allgather",      Collective, "all_to_all",      "collective: every rank gets every rank's buffer")             \
  X(ReduceScatter, "reduce_scatter", Collective, "all_to_all",      "collective: each rank gets one reduced slice")                \
  X(Alltoall,      "alltoall",       Collective, "all_to_all",      "collective: every rank sends a distinct slice to every rank") \
  X(Broadcast,     "broadcast",      Collective, "one_to_all",      "collective: the root's buffer reaches every rank")            \
  X(Reduce,        "reduce",         Collective, "all_to_one",      "collective: the root gets the reduction of all buffers")      \
  X(HaloExchange,  "halo_exchange",  Pattern,    "all_to_all",      "pattern: each rank exchanges faces with its grid neighbours") \
  X(NeighborExchange, "neighbor_exchange", Pattern, "all_to_all",   "pattern: irregular message sizes to each neighbour")          \
  X(BucketedAllreduce, "bucketed_allreduce", Pattern, "all_to_all", "pattern: a gradient all-reduced bucket by bucket")           \
  X(Nothing,       "nothing",        None,       "none",            "no bytes move: the harness timing itself")

// What sort of operation, and so who takes part: record name, participants, meaning.
#define COMMATLAS_OPERATION_KINDS(X)                                                               \
  X(Transfer,   "transfer",   "pair", "bytes from one place to another (or to several), in one process")  \
  X(Access,     "access",     "pair", "a processor (CPU cores or a GPU's SMs) loads or stores a memory")  \
  X(Message,    "message",    "pair", "a message between two ranks (or two GPUs one process drives)")     \
  X(Collective, "collective", "all",  "a collective call every member of a communicator makes")           \
  X(Pattern,    "pattern",    "all",  "an application's exchange over every member of a communicator")    \
  X(None,       "none",       "none", "nothing moves")

#define COMMATLAS_DIRECTIONS(X)                                                                    \
  X(Uni,           "uni",            "one way")                                                     \
  X(Bi,            "bi",             "both ways at once; the figure sums both directions")          \
  X(HalfRoundTrip, "half_round_trip","a round trip, reported as half of it (one-way latency)")      \
  X(OneToAll,      "one_to_all",     "one source, every other participant a destination")           \
  X(AllToOne,      "all_to_one",     "every other participant a source, one destination")           \
  X(AllToAll,      "all_to_all",     "every participant sends and receives")                        \
  X(None,          "none",           "nothing moves")

// How the bytes move: record name, the `interface` records and `list` name it by (one word per
// library or engine: both CUDA IPC copies are "cuda_ipc"), the name and colour the report shows
// (matplotlib's tab10/tab20 hues, fixed so that runs read alike), and its meaning. The meaning
// names the AMD form where it differs (SDMA, blit kernel, RCCL).
#define COMMATLAS_MECHANISMS(X)                                                                    \
  X(CpuMemcpy,    "cpu_memcpy",     "memcpy",         "memcpy",          "#9467bd", "libc memcpy from CPU threads")                           \
  X(CpuLoadStore, "cpu_load_store", "cpu_load_store", "CPU load/store",  "#8c564b", "CPU loads and stores")                                   \
  X(GpuLoadStore, "gpu_load_store", "sm_kernel",      "GPU load/store",  "#2ca02c", "a GPU kernel's loads and stores (direct access)")        \
  X(CopyEngine,   "copy_engine",    "copy_engine",    "copy engine",     "#1f77b4", "cudaMemcpyAsync on the copy engines (AMD: SDMA)")        \
  X(SmCopy,       "sm_copy",        "sm_kernel",      "SM copy",         "#ff7f0e", "an SM copy kernel (AMD: blit kernel)")                   \
  X(Prefetch,     "prefetch",       "prefetch",       "prefetch",        "#d62728", "cudaMemPrefetchAsync of managed memory")                 \
  X(MpiHost,      "mpi_host",       "mpi",            "MPI",             "#e377c2", "MPI on host buffers")                                    \
  X(MpiStaged,    "mpi_staged",     "mpi_staged",     "host-staged MPI", "#7f7f7f", "GPU buffers copied to host, MPI, copied back")           \
  X(MpiGpuAware,  "mpi_gpu_aware",  "mpi_gpu_aware",  "GPU-aware MPI",   "#bcbd22", "MPI handed device pointers (GPU-aware library)")         \
  X(CudaIpcCe,    "cuda_ipc_ce",    "cuda_ipc",       "CUDA IPC (CE)",   "#17becf", "CUDA IPC handle, copy engine into the peer's buffer")    \
  X(CudaIpcSm,    "cuda_ipc_sm",    "cuda_ipc",       "CUDA IPC (SM)",   "#aec7e8", "CUDA IPC handle, SM copy kernel into the peer's buffer") \
  X(Nccl,         "nccl",           "nccl",           "NCCL",            "#98df8a", "NCCL (AMD: RCCL)")                                       \
  X(GpuInitiated, "gpu_initiated",  "sm_kernel",      "GPU stores + flag", "#ff9896", "a kernel stores into the peer GPU's memory and raises a flag there") \
  X(NcclDevice,   "nccl_device",    "nccl",           "NCCL device API", "#dbdb8d", "a kernel stores into the peer GPU's NCCL window and signals through NCCL's device API (LSA barrier or LL)") \
  X(Nvshmem,      "nvshmem",        "nvshmem",        "NVSHMEM",         "#ffbb78", "a kernel puts into the peer GPU's NVSHMEM symmetric heap with a signal (putmem_signal), the peer waits on it") \
  X(Torch,        "torch",          "torch",          "PyTorch copy_",   "#c49c94", "PyTorch tensor.copy_ (measured by the torch suite)")     \
  X(TorchNccl,    "torch_nccl",     "torch",          "torch.distributed (NCCL)", "#f7b6d2", "torch.distributed on its NCCL backend (the torch suite)") \
  X(Harness,      "harness",        "harness",        "harness",         "#c5b0d5", "the timing harness alone")

#define COMMATLAS_MEMORIES(X)                                                                      \
  X(Host,          "host",           "CPU memory (DRAM of a NUMA node)")                            \
  X(Gpu,           "gpu",            "a GPU's memory (HBM)")                                        \
  X(None,          "none",           "no memory: the harness timing itself")

// Where a buffer's memory comes from (an endpoint's `allocator`): record name, the memory its
// bytes are in while timed ("either": managed pages sit where they were touched or advised, which
// the endpoint's `memory` says), and meaning. `malloc` and `pageable` are both plain malloc: host
// MPI patterns say the first, the GPU benchmarks (memory the GPU runtime does not know) the second.
#define COMMATLAS_ALLOCATORS(X)                                                                    \
  X(Malloc,        "malloc",         "host",   "plain malloc (host buffers of MPI patterns)")                   \
  X(Pageable,      "pageable",       "host",   "plain malloc, memory the GPU runtime does not know")            \
  X(Pinned,        "pinned",         "host",   "page-locked host memory (cudaHostAlloc, portable and mapped)")  \
  X(Registered,    "registered",     "host",   "malloc, then cudaHostRegister (portable and mapped)")           \
  X(Device,        "device",         "gpu",    "cudaMalloc")                                                    \
  X(DevicePool,    "device_pool",    "gpu",    "cudaMallocAsync from the device's default memory pool")         \
  X(NcclMem,       "nccl_mem",       "gpu",    "ncclMemAlloc: cuMem memory NCCL maps into its peers' symmetric windows") \
  X(NvshmemMalloc, "nvshmem_malloc", "gpu",    "nvshmem_malloc: NVSHMEM's symmetric heap, mapped into every peer of the job") \
  X(Managed,       "managed",        "either", "cudaMallocManaged: pages move to whoever touches them")
// clang-format on

struct Movement;

#define COMMATLAS_ENUM_NAME(name, ...) name,
enum class Operation { COMMATLAS_OPERATIONS(COMMATLAS_ENUM_NAME) };
enum class OperationKind { COMMATLAS_OPERATION_KINDS(COMMATLAS_ENUM_NAME) };
enum class MoveDirection { COMMATLAS_DIRECTIONS(COMMATLAS_ENUM_NAME) };
enum class Mechanism { COMMATLAS_MECHANISMS(COMMATLAS_ENUM_NAME) };
enum class Memory { COMMATLAS_MEMORIES(COMMATLAS_ENUM_NAME) };
enum class Allocator { COMMATLAS_ALLOCATORS(COMMATLAS_ENUM_NAME) };
#undef COMMATLAS_ENUM_NAME

std::string to_string(Operation v);
std::string to_string(OperationKind v);
std::string to_string(MoveDirection v);
std::string to_string(Mechanism v);
std::string to_string(Memory v);
std::string to_string(Allocator v);

// The attributes of an operation and of a mechanism, from their tables above.
OperationKind kind_of(Operation op);
// "pair" (two places, or two ranks), "all" (every member of a communicator) or "none".
std::string participants_of(OperationKind kind);
// Whether `d` is one of the directions `op` may have.
bool direction_allowed(Operation op, MoveDirection d);
// The word records and `list` name a mechanism's library or engine by ("cuda_ipc", "sm_kernel").
std::string interface_of(Mechanism m);
// A movement's `interface`: its mechanism's, or "harness" for a bare reference loop (the harness
// is what it checks, whatever it moves).
std::string interface_of(const Movement& m);

// One vocabulary as rows in declaration order, each value's record name, meaning and attributes
// (a kind's participants, an operation's kind and directions, a mechanism's interface, display
// name and colour): `vocabulary` prints these.
struct VocabularyEntry {
  std::string name;
  std::string meaning;
  std::vector<std::pair<std::string, std::string>> attributes;  // printed as strings
  std::vector<std::string> directions;                            // operations only
};
std::vector<VocabularyEntry> operation_vocabulary();
std::vector<VocabularyEntry> operation_kind_vocabulary();
std::vector<VocabularyEntry> direction_vocabulary();
std::vector<VocabularyEntry> mechanism_vocabulary();
std::vector<VocabularyEntry> memory_vocabulary();
std::vector<VocabularyEntry> allocator_vocabulary();
// The params consumed into a movement (consumed_params below), each with what it becomes.
std::vector<VocabularyEntry> param_vocabulary();
// Whether `allocator` is one of the table's names, and its bytes may be in `memory`.
bool allocator_allowed(const std::string& allocator, Memory memory);
// The allocator a record or a variant's params name; nullopt for a word the table does not have.
std::optional<Allocator> allocator_named(const std::string& name);
// The same for a param: a UsageError that lists the table's words for one it does not have.
Allocator parse_allocator(const std::string& name);
// The memory an allocator's bytes are in: host or gpu; nullopt for managed memory, whose pages
// sit where they were touched or advised (the table's "either").
std::optional<Memory> memory_of(Allocator allocator);

// One end of a movement: where the bytes are while timed, and how that buffer was made.
// For read/write/load-latency the processor end (the GPU or CPU doing the loads) is an endpoint
// too, with `processor = true` and no allocator.
struct Endpoint {
  Memory memory = Memory::Host;
  std::optional<int> gpu;      // the GPU whose memory this is (or whose SMs load, for a processor)
  std::optional<int> numa;     // NUMA node of host memory / of the CPU cores
  std::optional<int> rank;     // the rank owning the buffer; unset when every rank has one (collectives)
  std::string node;            // host name; filled by the runner when empty
  bool processor = false;
  // Choices of this buffer: the allocator (a name of the allocator table, which the builders below
  // take as an Allocator) and who wrote it first ("cpu", "gpu"); empty when not a choice.
  std::string allocator;
  std::string first_touch;
};

struct Movement {
  Operation operation = Operation::Copy;
  MoveDirection direction = MoveDirection::Uni;
  Mechanism mechanism = Mechanism::Harness;
  std::optional<Endpoint> from, to;  // unset only on benchmark-wide records (no variant known)
  // The processor that moves the bytes, where a benchmark declares it apart from the two places:
  // the GPU whose SMs run a copy kernel over arrays that may live elsewhere (gpu.stream_copy: GPU
  // 0 copying within GPU 1's memory crosses the link twice). Unset where the mover is one of the
  // endpoints (a read's processor) or a choice between them (engine_side of gpu.copy_*).
  std::optional<Endpoint> by;
  // Collectives and patterns: how many members the communicator has, the ranks of an MPI job or
  // the GPUs one process drives (single-process NCCL). Unset on point-to-point movements.
  std::optional<int> participants;
  // What else a user can choose for this movement (engine_side, threads, kernel shape, launch, ...),
  // as named in the variant's params.
  Params choices;
  std::string reference_of;  // bare reference loops: the benchmark they check
  // Bytes that must stay in a cache for the figure to be a cache figure (source plus destination
  // of a local copy, the buffer of a local read): the runner compares it with the cache the path
  // goes through. 0: the path crosses a link, so no cache can make it faster than the link.
  double cache_working_set_per_byte = 0;
  // Filled by the runner: every rank's host is the same (single-process runs: true).
  bool same_node = true;
  // Filled by the runner for result records: the working set fits the cache of the one memory
  // both endpoints sit in (the node's facts decide, topology/movement_peak.cpp).
  std::optional<bool> cache_resident;
};

// Builders for the endpoints benchmarks declare: the only way a benchmark or a backend makes one,
// so that every allocator a record names is one of the table's (a backend's own place types, the
// GPU runtime's MemoryKind and placements, convert to Allocator and build through these).
Endpoint host_memory(std::optional<int> numa, Allocator allocator, std::string first_touch = "cpu");
Endpoint gpu_memory(std::optional<int> gpu, Allocator allocator, std::string first_touch = "gpu");
Endpoint cpu_processor(std::optional<int> numa);  // the CPU cores doing loads/stores
Endpoint gpu_processor(std::optional<int> gpu);   // the SMs of a GPU doing loads/stores
Endpoint no_memory();                             // the harness timing itself

// A movement between two places; `choices` are the variant's params named in `choice_keys`
// that it has (the rest of its params are places, operation and mechanism).
Movement movement_between(Operation op, MoveDirection direction, Mechanism mechanism, Endpoint from, Endpoint to,
                          const Params& params = {}, std::initializer_list<const char*> choice_keys = {});
// Copies the params named in `keys` that `params` has into the movement's choices.
void keep_choices(Movement& m, const Params& params, std::initializer_list<const char*> keys);
// Only what is known of a benchmark before any variant is (benchmark-wide skip records).
Movement movement_of_benchmark(Operation op, MoveDirection direction, Mechanism mechanism);

// How many entries a comma-separated list param has ("0,1,2,3": 4; "": 0).
int list_length(const std::string& list);

// The GPU of each rank from a variant's "gpus" param ("0,1": rank 0 on GPU 0, ...); nullopt for a
// rank the list does not name (ranks other than 0 may see an empty list).
std::optional<int> gpu_of_rank(const Params& params, int rank);

// Params keys benchmarks consume into the movement's places, operation, direction or mechanism,
// each with what it becomes. Every other key of a variant must appear in the movement's choices
// (engine/tests/movement_contract_test.cpp checks both for every benchmark and variant).
struct ConsumedParam {
  const char* key;
  const char* becomes;
};
const std::vector<ConsumedParam>& consumed_params();

}  // namespace commatlas
