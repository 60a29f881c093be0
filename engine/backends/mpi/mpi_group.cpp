#include "backends/mpi/mpi_group.h"

#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/gpu_support.h"
#include "build_info.h"
#include "backends/mpi/mpi_check.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/mpi_library.h"
#include "core/placement.h"

namespace commatlas::mpi {
namespace {

class MpiGroup final : public Group {
 public:
  MpiGroup() {
    COMMATLAS_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    COMMATLAS_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    COMMATLAS_MPI(MPI_Get_processor_name(name, &len));
    hostname_.assign(name, len);
    // Ranks on this node: those with this host name. Not MPI_COMM_TYPE_SHARED: ranks that share
    // memory need not share a node name (one machine tested as two nodes, UTS namespaces), and
    // the records, the GPU choice and the NIC peaks all follow the name the rank reports.
    std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME, '\0');
    COMMATLAS_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                                MPI_COMM_WORLD));
    for (int r = 0; r < size_; ++r) rank_nodes_.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    const int color = node_index(rank_nodes_, rank_);
    MPI_Comm node;
    COMMATLAS_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, rank_, &node));
    COMMATLAS_MPI(MPI_Comm_rank(node, &local_rank_));
    COMMATLAS_MPI(MPI_Comm_size(node, &local_size_));
    MPI_Comm_free(&node);
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int text_len = 0;
    MPI_Get_library_version(text, &text_len);
    library_ = parse_mpi_library(std::string(text, static_cast<std::size_t>(text_len)));
    const CudaSupportVerdict gpu = mpi_cuda_support();
    library_.gpu_support = !gpu.supported() ? "none" : gpu.runtime == "ROCm" ? "rocm" : "cuda";
  }
  const MpiLibrary* mpi_library() const override { return &library_; }
  std::vector<std::string> rank_nodes() const override { return rank_nodes_; }
  ~MpiGroup() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string hostname() const override { return hostname_; }
  std::string kind() const override { return "mpi"; }
  void barrier() override { COMMATLAS_MPI(MPI_Barrier(MPI_COMM_WORLD)); }

  std::int64_t broadcast(std::int64_t value) override {
    long long v = value;
    COMMATLAS_MPI(MPI_Bcast(&v, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    return v;
  }

  void max_over_ranks(std::vector<double>& values) override {
    // One reduction over unequal counts never completes (a rank with none returns at once and the
    // others wait for it): agree on the length first. On 4 H100s, NCCL send/recv between ranks 0
    // and 1 hung every job this way, its idle ranks 2 and 3 having timed nothing.
    long long n = static_cast<long long>(values.size());
    COMMATLAS_MPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    values.resize(static_cast<std::size_t>(n), 0.0);
    COMMATLAS_MPI(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                                MPI_COMM_WORLD));
  }

  double mean_over_ranks(double value, bool has_value) override {
    double v[2] = {has_value ? value : 0.0, has_value ? 1.0 : 0.0};
    COMMATLAS_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return v[1] > 0 ? v[0] / v[1] : 0.0;
  }

  bool all(bool ok) override {
    int v = ok ? 1 : 0;
    COMMATLAS_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    return v != 0;
  }

  std::int64_t sum(std::int64_t value) override {
    long long v = value;
    COMMATLAS_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    return v;
  }

  std::vector<std::string> gather_strings(const std::string& value) override {
    int len = static_cast<int>(value.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    COMMATLAS_MPI(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
    std::vector<int> displs(lens.size());
    int total = 0;
    for (std::size_t i = 0; i < lens.size(); ++i) {
      displs[i] = total;
      total += lens[i];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    COMMATLAS_MPI(MPI_Gatherv(value.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                              MPI_COMM_WORLD));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lens.size(); ++i) out.push_back(all.substr(displs[i], lens[i]));
    return out;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string hostname_;
  std::vector<std::string> rank_nodes_;
  MpiLibrary library_;
};

class MpiProbe final : public BackendProbe {
 public:
  std::string name() const override { return "mpi"; }
  void describe(JsonWriter& out) const override {
    out.field("library_version", mpi_library_version());
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(text, &len);
    const MpiLibrary library = parse_mpi_library(std::string(text, static_cast<std::size_t>(len)));
    out.field("library", library.id);
    out.field("library_name", library.name);
    out.field("library_release", library.version);
    out.field("mpiexec", COMMATLAS_MPIEXEC);
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    out.field("standard", std::to_string(major) + "." + std::to_string(minor));
    out.field("thread_level", requested_thread_level().name);
    const CudaSupportVerdict cuda = mpi_cuda_support();
    out.field("cuda_aware", cuda.supported());
    out.field("cuda_aware_reason", cuda.reason);
  }
};
COMMATLAS_REGISTER_BACKEND(MpiProbe);

}  // namespace

std::unique_ptr<Group> start_mpi_group(int* argc, char*** argv) {
  int provided = 0;
  COMMATLAS_MPI(MPI_Init_thread(argc, argv, requested_thread_level().level, &provided));
  // Errors come back as codes so they become records instead of killing the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiGroup>();
}

// MPI_THREAD_SINGLE, as osu_latency, osu_bw and osu_bibw (MPI_Init) ask. Open MPI (3.x, 4.x) turns
// its internal locking on (opal_using_threads) for every level above SINGLE, FUNNELED included: each
// message then pays atomics and locks in matching, free lists and request completion. On a 2-core VM
// (Open MPI 4.1.4, shared memory) FUNNELED read 0.16-0.21 us instead of 0.12-0.15 us per 1-byte
// half round trip and 0.65-0.75x the 1-64 B bandwidth (scripts/device/osu_compare.sh measures it).
// Only the main thread calls MPI; the watchdog's MPI_Abort from its own thread ends the job either
// way.
ThreadLevel requested_thread_level() {
  const char* text = std::getenv("COMMATLAS_MPI_THREAD_LEVEL");
  const std::string name = text && *text ? text : "single";
  if (name == "single") return {MPI_THREAD_SINGLE, name};
  if (name == "funneled") return {MPI_THREAD_FUNNELED, name};
  if (name == "serialized") return {MPI_THREAD_SERIALIZED, name};
  if (name == "multiple") return {MPI_THREAD_MULTIPLE, name};
  throw UsageError("COMMATLAS_MPI_THREAD_LEVEL=" + name + " is not an MPI thread level (single, funneled, serialized, multiple)");
}

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS",
                          "MV2_COMM_WORLD_SIZE", "I_MPI_RANK"}) {
    if (std::getenv(var)) return true;
  }
  return false;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, len);
  const auto nl = v.find('\n');
  if (nl != std::string::npos) v.resize(nl);
  while (!v.empty() && (v.back() == ',' || v.back() == ' ' || v.back() == '\0')) v.pop_back();
  return v;
}

}  // namespace commatlas::mpi
