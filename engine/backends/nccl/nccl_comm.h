// NCCL communicators as RAII values, and the team of GPUs one process drives in an NCCL job.
//
// Two ways to build a team: one rank per GPU under MPI (team_nccl_mpi.cpp: ncclCommInitRank,
// the unique id broadcast over MPI), or one process driving every GPU (ncclCommInitAll). The
// benchmarks are written once against the team; a phase of an operation is enqueued for every
// member inside one ncclGroupStart/End, which NCCL requires when one thread drives several GPUs.
#pragma once

#include <nccl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/memory.h"
#include "core/context.h"

namespace commatlas::nccl {

class NcclComm {
 public:
  NcclComm(ncclComm_t comm, int device) : comm_(comm), device_(device) {}
  ~NcclComm();
  NcclComm(NcclComm&& other) noexcept : comm_(other.comm_), device_(other.device_) { other.comm_ = nullptr; }
  NcclComm& operator=(NcclComm&&) = delete;
  NcclComm(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }

 private:
  ncclComm_t comm_ = nullptr;
  int device_ = 0;
};

// One GPU of the job as this process sees it: its communicator, its rank and the stream NCCL
// operations are enqueued on.
struct NcclMember {
  int rank = 0;
  int device = 0;
  NcclComm comm;
  cuda::Stream stream;
};

enum class NcclLaunch {
  RankPerProcess,  // one MPI rank per GPU (ncclCommInitRank)
  SingleProcess,   // one process drives every GPU (ncclCommInitAll)
};

std::string to_string(NcclLaunch launch);

class NcclTeam {
 public:
  NcclTeam(NcclLaunch launch, int ranks, std::vector<std::unique_ptr<NcclMember>> members)
      : launch_(launch), ranks_(ranks), members_(std::move(members)) {}
  NcclLaunch launch() const { return launch_; }
  int ranks() const { return ranks_; }  // NCCL ranks in the communicator (GPUs in the job)
  const std::vector<std::unique_ptr<NcclMember>>& members() const { return members_; }
  std::vector<const cuda::Stream*> streams() const;
  // "0,1": the GPU of every NCCL rank this process drives, for the records.
  std::string devices() const;

  // Enqueues one phase: `part` for every member, inside one NCCL group.
  void enqueue_phase(const std::function<void(const NcclMember&)>& part) const;

 private:
  NcclLaunch launch_;
  int ranks_;
  std::vector<std::unique_ptr<NcclMember>> members_;
};

// Creating communicators costs tens of milliseconds to seconds and, under MPI, is collective;
// one team per launch mode is made on first use and kept for the process's life (the
// benchmarks of one run share it). Throws Skip when it cannot be made here.
const NcclTeam& single_process_team();

// Registered by team_nccl_mpi.cpp when MPI is built in; null otherwise.
using RankTeamFactory = const NcclTeam& (*)(Context&);
RankTeamFactory& rank_per_process_team_factory();

// The team for `launch` in this context, or Skip with the reason it cannot be made.
const NcclTeam& nccl_team(NcclLaunch launch, Context& ctx);

// Why NCCL cannot run in `launch` mode here, or nullopt.
std::optional<std::string> nccl_unavailable(NcclLaunch launch, const Context& ctx, int min_gpus);

}  // namespace commatlas::nccl
