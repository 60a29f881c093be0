// The application patterns, written once against Transport (transport/transport.h) and offered by
// every transport whose registration has a PatternSide:
//   pattern.halo2d.<m>   CloverLeaf-like: 4 faces of a 2-D subdomain with the 4 grid neighbours
//   pattern.halo3d.<m>   the same in 3-D: 6 faces, 6 neighbours
//   pattern.neighbor.<m> Quicksilver-like: each step a different, seeded amount to each of the 6
//                        neighbours of a 3-D grid, the counts exchanged first
//   pattern.bucketed_allreduce.<m>  data-parallel training: a gradient all-reduced bucket by
//                        bucket (PyTorch DDP's 25 MiB), alone or overlapping a GPU compute kernel
// One operation is one application step; a sample is the slowest rank's time (max over ranks).
// The size of a point: halo, the rank's subdomain (doubles, one ghost layer added); neighbour
// exchange, the mean message; bucketed allreduce, the gradient.
#include <mpi.h>

#include <cmath>
#include <cstring>

#include "collective/collective_mpi.h"
#include "benchmarks/pattern/compute.h"
#include "core/error.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/sizes.h"
#include "transport/geometry.h"
#include "transport/transport.h"

namespace commatlas {
namespace {

enum class PatternKind { Halo2d, Halo3d, Neighbor, Bucketed };

constexpr std::uint64_t kDefaultBucketBytes = 25ull << 20;  // PyTorch DDP's bucket_cap_mb
constexpr std::int64_t kDefaultComputeUs = 5000;

std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// Each rank's neighbours on the periodic grid, in direction order; `stride` 2 along x is the
// planted wrong-neighbour fault.
std::vector<int> neighbours(int rank, const std::vector<int>& dims, bool faulty) {
  std::vector<int> out;
  for (int k = 0; k < 2 * static_cast<int>(dims.size()); ++k) out.push_back(grid_neighbour(rank, dims, k, faulty && k < 2 ? 2 : 1));
  return out;
}

// One message per direction k: sent to neighbour k with tag k, received from neighbour k with the
// tag of the direction it was sent in (opposite(k)), so two directions that reach the same rank
// (2 ranks along an axis) never mix. The planted missing message drops rank 0's direction 0 on
// both ends, so nothing waits for it.
void plan_messages(int rank, const std::vector<int>& nb, const std::vector<std::size_t>& send_bytes, std::size_t slot,
                   std::vector<PeerMessage>& sends, std::vector<PeerMessage>& recvs) {
  const bool drop = pattern_fault() == PatternFault::MissingMessage;
  sends.clear();
  recvs.clear();
  for (int k = 0; k < static_cast<int>(nb.size()); ++k) {
    if (!(drop && rank == 0 && k == 0))
      sends.push_back({nb[k], k, k * slot, send_bytes[k], static_cast<std::size_t>(opposite_direction(k)) * slot});
  }
  for (int k = 0; k < static_cast<int>(nb.size()); ++k) {
    if (!(drop && nb[k] == 0 && opposite_direction(k) == 0))
      recvs.push_back({nb[k], opposite_direction(k), k * slot, 0, 0});
  }
}

// No resize(): a pattern's size changes its whole layout (subdomain grid and faces, message
// slots, buckets), laid out by the mechanism in memory it sized once (the IPC and NCCL ones map or
// register it), and the default sweeps have one or two sizes per variant, so each size is
// prepared afresh.
class StepWorkload : public Workload {
 public:
  StepWorkload(Context& ctx, std::unique_ptr<Transport> mech) : ctx_(ctx), mech_(std::move(mech)) {}

  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    reset();
    const bool move = !planted_no_move();  // test-only (COMMATLAS_TEST_SKIP_MOVE), same on every rank
    for (std::int64_t s = 0; s < samples; ++s) {
      // Ranks start each sample together, so a sample's max over ranks is the step's time.
      ctx_.group.barrier();
      time_host_samples(1, ops, seconds, [&] {
        if (move) step();
      });
    }
  }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }
  // MPI over device buffers copies each small message at its process's copy level, so a pattern's
  // step pays it as point-to-point does (Accounting::copy_level_witness, set in base()).
  std::optional<double> copy_level_us() override { return mech_->copy_level_us(); }
  // A transport whose GPU waits gave up says so (check_run) here, in the data check every rank
  // takes part in: thrown from a step on one rank alone, it would leave the others in the next
  // collective. Its steps returned at the give-up, so neither their data nor their times stand.
  Verification verify() final {
    try {
      mech_->check_run();
    } catch (const MeasurementError& e) {
      return {false, 0, e.what()};
    }
    return check();
  }

 protected:
  virtual Verification check() = 0;  // every byte the last step received, as the pattern defines it
  // run() itself resets (sources filled, destinations poisoned) before every batch, timed or not,
  // outside the timed samples: nothing is left to do here.
  void prepare_batch() override {}
  virtual void reset() = 0;  // fills sources and poisons destinations, outside the timed loop
  virtual void step() = 0;
  Accounting base(const std::string& what) const {
    Accounting a;
    a.timing = "host steady_clock around back-to-back steps after an MPI_Barrier; per sample the slowest rank's time";
    a.latency_includes = what + ", " + mech_->describe() + ", on " + std::to_string(ctx_.group.size()) +
                         " ranks; the slowest rank";
    a.max_over_ranks = true;
    a.copy_level_witness = mech_->copy_level_witness();
    return a;
  }
  Context& ctx_;
  std::unique_ptr<Transport> mech_;
};

class HaloWorkload final : public StepWorkload {
 public:
  HaloWorkload(Context& ctx, std::unique_ptr<Transport> mech, const HaloGeometry& g)
      : StepWorkload(ctx, std::move(mech)), g_(g), rank_(ctx.group.rank()),
        dims_(grid_dims(ctx.group.size(), g.dims)) {
    nb_ = neighbours(rank_, dims_, pattern_fault() == PatternFault::WrongNeighbour);
    plan_messages(rank_, nb_, std::vector<std::size_t>(nb_.size(), g_.face_bytes()), g_.face_bytes(), sends_, recvs_);
    for (PeerMessage& m : recvs_) m.bytes = g_.face_bytes();
    grid_ = static_cast<double*>(mech_->allocate(static_cast<std::size_t>(g_.stored_cells()) * sizeof(double)));
    image_.assign(static_cast<std::size_t>(g_.stored_cells()), kHaloPoison);
    // Interior cells hold this rank's values; ghost cells stay poisoned until an exchange fills them.
    for (std::int64_t i = 0; i < g_.stored_cells(); ++i) {
      bool interior = true;
      std::int64_t rest = i;
      for (int d = 0; d < g_.dims; ++d, rest /= g_.extent()) {
        const std::int64_t c = rest % g_.extent();
        interior = interior && c >= 1 && c <= g_.n;
      }
      if (interior) image_[static_cast<std::size_t>(i)] = halo_value(rank_, i);
    }
  }

  Accounting accounting() const override {
    Accounting a = base("one halo step (" + g_.describe() + "; process grid " + dims_text(dims_) +
                        ", periodic): pack the faces, exchange with the " + std::to_string(g_.faces()) +
                        " neighbours, unpack into the ghost cells");
    a.bytes_per_op = static_cast<double>(g_.faces() * g_.face_bytes());
    a.buffer_bytes = a.bytes_per_op;
    return a;
  }

  Verification check() override {
    std::vector<double> got(image_.size());
    mech_->download(got.data(), grid_, got.size() * sizeof(double));
    const std::vector<int> correct = neighbours(rank_, dims_, false);
    for (int k = 0; k < g_.faces(); ++k)
      for (std::int64_t f = 0; f < g_.face_cells(); ++f) {
        const double want = halo_value(correct[k], g_.face_cell(opposite_direction(k), f, false));
        const double have = got[static_cast<std::size_t>(g_.face_cell(k, f, true))];
        if (have != want) {
          const long long from = have >= 4294967296.0 ? static_cast<long long>(have / 4294967296.0) - 1 : -1;
          return {false, static_cast<std::uint64_t>(f) * 8,
                  "ghost face " + std::to_string(k) + " cell " + std::to_string(f) + " holds " +
                      (from >= 0 ? "rank " + std::to_string(from) + "'s data" : "no rank's data (never received)") +
                      ", expected neighbour rank " + std::to_string(correct[k]) + "'s"};
        }
      }
    return {true, static_cast<std::uint64_t>(g_.faces() * g_.face_bytes()), ""};
  }

 private:
  void reset() override {
    mech_->upload(grid_, image_.data(), image_.size() * sizeof(double));
    mech_->fill(mech_->recv_home(), 0xFF, g_.faces() * g_.face_bytes());
  }
  void step() override {
    mech_->pack(g_, grid_, mech_->send_home());
    mech_->exchange(sends_, recvs_);
    mech_->unpack(g_, mech_->recv_home(), grid_);
  }

  HaloGeometry g_;
  int rank_;
  std::vector<int> dims_, nb_;
  std::vector<PeerMessage> sends_, recvs_;
  double* grid_ = nullptr;
  std::vector<double> image_;
};

class NeighborWorkload final : public StepWorkload {
 public:
  NeighborWorkload(Context& ctx, std::unique_ptr<Transport> mech, std::uint64_t mean_words)
      : StepWorkload(ctx, std::move(mech)), rank_(ctx.group.rank()), dims_(grid_dims(ctx.group.size(), 3)),
        mean_(mean_words), slot_(static_cast<std::size_t>(2 * mean_words + 1) * 8), seed_(ctx.options.seed) {
    nb_ = neighbours(rank_, dims_, pattern_fault() == PatternFault::WrongNeighbour);
    std::vector<std::uint64_t> payload(nb_.size() * slot_ / 8);
    for (std::size_t k = 0; k < nb_.size(); ++k)
      for (std::size_t i = 0; i < slot_ / 8; ++i) payload[k * slot_ / 8 + i] = irregular_word(rank_, static_cast<int>(k), 0, i);
    mech_->upload(mech_->send_home(), payload.data(), payload.size() * 8);
    send_counts_.resize(nb_.size());
    plan_messages(rank_, nb_, std::vector<std::size_t>(nb_.size(), 0), slot_, sends_, recvs_);
    // Counts go to every neighbour, also where the planted fault drops the payload.
    for (int k = 0; k < static_cast<int>(nb_.size()); ++k) {
      count_sends_.push_back({nb_[k], k, 0, 8, 0});
      count_recvs_.push_back({nb_[k], opposite_direction(k), 0, 8, 0});
    }
    all_recv_counts_.resize(count_recvs_.size());
  }

  Accounting accounting() const override {
    Accounting a = base("one irregular exchange step (Quicksilver-like; process grid " + dims_text(dims_) +
                        ", 6 neighbours, each message " + "0 to " + format_size(2 * mean_ * 8) +
                        " drawn per step from a seeded uniform distribution): the counts, then the messages");
    // The expected bytes a rank sends per step: its sizes vary step by step around this mean.
    a.bytes_per_op = static_cast<double>(nb_.size() * mean_ * 8);
    a.buffer_bytes = a.bytes_per_op;
    return a;
  }

  Verification check() override {
    if (step_ == 0) return {false, 0, "no step ran"};
    const std::uint64_t last = step_ - 1;
    const std::vector<int> correct = neighbours(rank_, dims_, false);
    std::vector<std::uint64_t> got(nb_.size() * slot_ / 8);
    mech_->download(got.data(), mech_->recv_home(), got.size() * 8);
    std::uint64_t checked = 0;
    for (int k = 0; k < static_cast<int>(nb_.size()); ++k) {
      const int from = correct[k];
      const std::uint64_t want_count = irregular_words(seed_, last, from, opposite_direction(k), mean_);
      if (all_recv_counts_[k] != want_count)
        return {false, checked, "step " + std::to_string(last) + ": the count from direction " + std::to_string(k) +
                                    " is " + std::to_string(all_recv_counts_[k]) + " words, neighbour rank " +
                                    std::to_string(from) + " sent " + std::to_string(want_count)};
      for (std::uint64_t i = 0; i < want_count; ++i) {
        const std::uint64_t have = got[k * slot_ / 8 + i];
        if (have != irregular_word(from, opposite_direction(k), 0, i))
          return {false, checked, "step " + std::to_string(last) + ": word " + std::to_string(i) + " of the message from direction " +
                                      std::to_string(k) + " is not neighbour rank " + std::to_string(from) + "'s" +
                                      (have == ~0ull ? " (never received)" : "")};
      }
      checked += want_count * 8 + 8;
    }
    return {true, checked, ""};
  }

 private:
  void reset() override { mech_->fill(mech_->recv_home(), 0xFF, nb_.size() * slot_); }
  void step() override {
    for (std::size_t k = 0; k < nb_.size(); ++k)
      send_counts_[k] = irregular_words(seed_, step_, rank_, static_cast<int>(k), mean_);
    mech_->exchange_counts(count_sends_, send_counts_, count_recvs_, all_recv_counts_);
    for (PeerMessage& m : sends_) m.bytes = send_counts_[static_cast<std::size_t>(m.tag)] * 8;
    for (PeerMessage& m : recvs_) m.bytes = all_recv_counts_[m.offset / slot_] * 8;
    mech_->exchange(sends_, recvs_);
    ++step_;
  }

  int rank_;
  std::vector<int> dims_, nb_;
  std::uint64_t mean_;
  std::size_t slot_;
  std::uint64_t seed_;
  std::uint64_t step_ = 0;
  std::vector<PeerMessage> sends_, recvs_, count_sends_, count_recvs_;
  std::vector<std::uint64_t> send_counts_, all_recv_counts_;
};

class BucketedWorkload final : public StepWorkload {
 public:
  BucketedWorkload(Context& ctx, std::unique_ptr<Transport> mech, std::uint64_t floats, std::uint64_t bucket_floats,
                   std::int64_t compute_us, std::unique_ptr<GpuCompute> compute)
      : StepWorkload(ctx, std::move(mech)), floats_(floats), bucket_(bucket_floats), compute_us_(compute_us),
        compute_(std::move(compute)) {
    std::vector<float> source(floats_);
    for (std::size_t i = 0; i < floats_; ++i) source[i] = mpi::collective_source_value(ctx.group.rank(), i);
    mech_->upload(mech_->send_home(), source.data(), floats_ * 4);
    buckets_ = (floats_ + bucket_ - 1) / bucket_;
    // The planted missing message: the last bucket is never reduced (on every rank, so none waits).
    if (pattern_fault() == PatternFault::MissingMessage) --buckets_;
  }

  Accounting accounting() const override {
    Accounting a = base("one step of " + std::to_string((floats_ + bucket_ - 1) / bucket_) + " bucket allreduce(s) of " +
                        format_size(bucket_ * 4) + " (sum of floats) over a " + format_size(floats_ * 4) + " gradient" +
                        (compute_ ? ", overlapping a " + std::to_string(compute_us_) +
                                        " us GPU compute kernel on a stream of its own (the step waits for both)"
                                  : ""));
    a.bytes_per_op = static_cast<double>(floats_ * 4);
    a.buffer_bytes = a.bytes_per_op;
    // Without compute in the step, busbw says what the links carried, as for any allreduce.
    if (!compute_) a.collective = CollectiveAccounting{"allreduce", bus_factor(CollectiveOp::AllReduce, ctx_.group.size())};
    return a;
  }

  Verification check() override {
    std::vector<float> got(floats_);
    mech_->download(got.data(), mech_->recv_home(), floats_ * 4);
    const int ranks = ctx_.group.size();
    for (std::size_t i = 0; i < floats_; ++i) {
      double want = 0;
      for (int r = 0; r < ranks; ++r) want += mpi::collective_source_value(r, i);
      if (static_cast<double>(got[i]) != want)
        return {false, i * 4, "gradient element " + std::to_string(i) + " (bucket " + std::to_string(i / bucket_) + ") is " +
                                  std::to_string(got[i]) + ", expected the sum " + std::to_string(want)};
    }
    return {true, floats_ * 4, ""};
  }

 private:
  void reset() override { mech_->fill(mech_->recv_home(), 0xFF, floats_ * 4); }
  void step() override {
    if (compute_) compute_->start(static_cast<double>(compute_us_));
    const float* send = static_cast<const float*>(mech_->send_home());
    float* recv = static_cast<float*>(mech_->recv_home());
    for (std::uint64_t b = 0; b < buckets_; ++b) {
      const std::uint64_t first = b * bucket_;
      mech_->allreduce(send + first, recv + first, std::min(bucket_, floats_ - first));
    }
    mech_->finish();
    if (compute_) compute_->wait();
  }

  std::uint64_t floats_, bucket_, buckets_ = 0;
  std::int64_t compute_us_;
  std::unique_ptr<GpuCompute> compute_;
};

class PatternBenchmark final : public Benchmark {
 public:
  PatternBenchmark(PatternKind kind, std::shared_ptr<const TransportSpec> spec)
      : kind_(kind), spec_(std::move(spec)), side_(*spec_->patterns) {}

  BenchmarkInfo info() const override {
    BenchmarkInfo i{"pattern." + name() + "." + side_.key, Category::Pattern, spec_->suite, "",
                    Metric::Latency, RankRange{2, 0}, {}, {}};
    const std::string how = " (" + to_string(spec_->mechanism) + "), one step timed, slowest rank";
    switch (kind_) {
      case PatternKind::Halo2d:
        i.description = "2-D halo exchange (CloverLeaf-like): 4 faces with the neighbours of a periodic process grid" + how +
                        "; size = each rank's subdomain of doubles";
        // 256^2 and 1024^2 doubles per rank; --sizes 128M for 4096^2.
        i.default_sizes = {512ull << 10, 8ull << 20};
        i.quick_sizes = {512ull << 10};
        break;
      case PatternKind::Halo3d:
        i.description = "3-D halo exchange: 6 faces with the neighbours of a periodic process grid" + how +
                        "; size = each rank's subdomain of doubles";
        i.default_sizes = {2ull << 20, 16ull << 20};  // 64^3 and 128^3 doubles per rank
        i.quick_sizes = {2ull << 20};
        break;
      case PatternKind::Neighbor:
        i.description = "irregular neighbour exchange (Quicksilver-like): seeded sizes per step to 6 neighbours, counts first" +
                        how + "; size = the mean message";
        i.default_sizes = {4ull << 10, 256ull << 10};
        i.quick_sizes = {4ull << 10};
        break;
      case PatternKind::Bucketed:
        i.description = "bucketed gradient allreduce (DDP-like, 25 MiB buckets), alone and overlapping a GPU compute kernel" +
                        how + "; size = the gradient";
        // 32 MiB: two buckets (25 + 7 MiB). A ResNet-50-sized 100 MiB gradient is --sizes 100M: the
        // default run has a 60 s target, and every mechanism runs both variants.
        i.default_sizes = {32ull << 20};
        i.quick_sizes = {8ull << 20};
        break;
    }
    return i;
  }

  std::optional<std::string> unavailable(const Context& ctx) const override {
    if (side_.unavailable) return side_.unavailable(ctx);
    return spec_->unavailable ? spec_->unavailable(ctx) : std::nullopt;
  }

  std::vector<Params> variants(const Context& ctx) const override {
    const int ranks = ctx.group.size();
    switch (kind_) {
      case PatternKind::Halo2d: return {Params{{"process_grid", dims_text(grid_dims(ranks, 2))}}};
      case PatternKind::Halo3d:
      case PatternKind::Neighbor: return {Params{{"process_grid", dims_text(grid_dims(ranks, 3))}}};
      case PatternKind::Bucketed:
        return {Params{{"bucket_bytes", static_cast<std::int64_t>(kDefaultBucketBytes)}, {"compute_us", std::int64_t{0}}},
                Params{{"bucket_bytes", static_cast<std::int64_t>(kDefaultBucketBytes)}, {"compute_us", kDefaultComputeUs}}};
    }
    return {Params{}};
  }

  Movement movement(const Context& ctx, const Params& params) const override {
    Movement m;
    m.operation = kind_ == PatternKind::Bucketed ? Operation::BucketedAllreduce
                  : kind_ == PatternKind::Neighbor ? Operation::NeighborExchange
                                                   : Operation::HaloExchange;
    m.direction = MoveDirection::AllToAll;
    m.mechanism = spec_->mechanism;
    if (params.entries().empty()) return m;  // benchmark-wide record: no variant known
    const Endpoint e =
        side_.on_gpu ? gpu_memory(side_.gpu ? std::optional<int>(side_.gpu(ctx)) : std::nullopt, Allocator::Device)
                     : host_memory(std::nullopt, Allocator::Malloc);
    m.from = e;
    m.to = e;
    m.participants = ctx.group.size();
    m.choices = params;
    return m;
  }

  std::unique_ptr<Workload> prepare(Context& ctx, const Params& params, std::uint64_t bytes) const override {
    const int ranks = ctx.group.size();
    switch (kind_) {
      case PatternKind::Halo2d:
      case PatternKind::Halo3d: {
        const HaloGeometry g = halo_geometry(kind_ == PatternKind::Halo2d ? 2 : 3, bytes);
        auto mech = spec_->make(ctx, params, g.faces() * g.face_bytes(), g.faces() * g.face_bytes());
        return std::make_unique<HaloWorkload>(ctx, std::move(mech), g);
      }
      case PatternKind::Neighbor: {
        const std::uint64_t mean = std::max<std::uint64_t>(bytes / 8, 1);
        const std::size_t slots = static_cast<std::size_t>(2 * grid_dims(ranks, 3).size()) * (2 * mean + 1) * 8;
        return std::make_unique<NeighborWorkload>(ctx, spec_->make(ctx, params, slots, slots), mean);
      }
      case PatternKind::Bucketed: {
        const std::uint64_t floats = bytes / 4;
        if (floats == 0) throw Skip("a gradient of " + format_size(bytes) + " holds no float");
        const std::int64_t compute_us = params.integer("compute_us");
        std::unique_ptr<GpuCompute> compute;
        if (compute_us > 0) {
          if (!gpu_compute_maker()) throw Skip("no GPU compute to overlap with: this engine was built without CUDA");
          compute = gpu_compute_maker()(ctx);  // throws Skip without a GPU
        }
        const auto bucket = static_cast<std::uint64_t>(params.integer("bucket_bytes")) / 4;
        return std::make_unique<BucketedWorkload>(ctx, spec_->make(ctx, params, floats * 4, floats * 4), floats, bucket, compute_us,
                                                  std::move(compute));
      }
    }
    throw MeasurementError("unknown pattern");
  }

 private:
  std::string name() const {
    switch (kind_) {
      case PatternKind::Halo2d: return "halo2d";
      case PatternKind::Halo3d: return "halo3d";
      case PatternKind::Neighbor: return "neighbor";
      case PatternKind::Bucketed: return "bucketed_allreduce";
    }
    return "?";
  }
  PatternKind kind_;
  std::shared_ptr<const TransportSpec> spec_;
  const PatternSide& side_;
};

void add_patterns(const std::shared_ptr<const TransportSpec>& spec) {
  if (!spec->patterns) return;
  for (PatternKind kind : {PatternKind::Halo2d, PatternKind::Halo3d, PatternKind::Neighbor, PatternKind::Bucketed}) {
    if (kind == PatternKind::Bucketed && !spec->patterns->collectives) continue;
    Registry::instance().add(std::make_unique<PatternBenchmark>(kind, spec));
  }
}

const bool registered = register_transport_family(&add_patterns);

}  // namespace
}  // namespace commatlas
