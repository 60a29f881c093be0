/* commatlas-osu-ref: osu_latency, osu_bw and osu_bibw as the OSU micro-benchmarks 7.x run them,
 * in a process of their own.
 *
 * The engine's MPI figures are checked against this program. Its value is that it shares nothing
 * with the engine but the launcher: no harness, no registry, no threads, no other library, plain
 * MPI_Init, so a cost the engine process adds (and a bare loop inside the engine would pay too)
 * shows here as a difference. Keep it that way: the loops below are OSU's, with OSU 7.x's
 * defaults (osu_util_mpi.h), and nothing is added inside a timed loop.
 *
 *   mpiexec -n 2 commatlas-osu-ref [--tests latency,bw,bibw] [--sizes 1,64,4096] [--buffers host|device]
 *                                  [--gpu-context] [--passes N] [--then SWEEP...]
 *
 * --then starts another sweep with options of its own, run after the one before it in the same
 * launch: `commatlas run` measures host and device buffers in one launch (each launch costs about
 * 1 s of MPI_Init, CUDA set-up and MPI_Finalize on 2x H100).
 *
 * --buffers device is OSU 7.x's `-d cuda D D`: both buffers cudaMalloc'd on the rank's GPU (local
 * rank mod GPU count, chosen before MPI_Init as OSU does), set with cudaMemset. Only in a CUDA
 * build, and only when the MPI library reports CUDA support at run time: a device pointer is never
 * handed to an MPI that does not say it can take one (one line on stderr; the other sweeps still
 * run, then exit status 3). The host sweeps of a launch with a device sweep run with that context,
 * made before MPI_Init; their lines say so ("context_made").
 *
 * --gpu-context (host buffers, CUDA build): each rank makes its GPU's CUDA context right after
 * MPI_Init, as every rank of the engine does from its start (bind_rank_to_gpu). It is a condition
 * of the process, not a cost of the harness, and a CUDA-aware MPI pays for it on host buffers too:
 * on 2x H100 (Open MPI 4.1.4) the 1-64 B bibw read 0.55-0.65x and the 1 B latency 1.24x of the
 * same loop in a process without one (results/nvidia-h100-x2/host-mpi-context).
 *
 * Where the launcher gives a rank more than one CPU, the loops run on the first of them, as the
 * engine's measuring thread does (engine/core/affinity.h): two ranks left to float over blocks of
 * cores read 2x apart from one run to the next on 2x H100.
 *
 * --passes N runs the whole sweep N times, one after the other, and numbers its lines ("pass":k):
 * the second pass, after the whole first sweep, says whether the first repeats, as the engine's
 * confirmation batch does for its own points (OSU times each size once).
 *
 * After each (test, size) of a pass, outside its loop, the two ranks hand one cache line back and
 * forth through a shared-memory window: where the host had put their CPUs ("cpu_pair"), the
 * reading the engine takes beside each of its passes (engine/core/cpu_pair.h: on a VM the host
 * moves the vCPUs, and a shared-memory ping-pong moves 3-4x with them). This job is a job of its
 * own, so it carries its own reading.
 *
 * One JSON line per (test, size) on rank 0's stdout, e.g.
 *   {"test":"osu_latency","bytes":8,"buffers":"host","latency_us":0.47,"seconds":0.0094,...}
 * A device line also carries each rank's copy level around its loop (copy_level_us below).
 * A usage error is one line on stderr and exit status 2.
 */
#define _GNU_SOURCE /* sched_setaffinity, cpu_set_t */
#include <mpi.h>

#if defined(COMMATLAS_OSU_CUDA)
#include <cuda_runtime.h>
/* Open MPI declares MPIX_Query_cuda_support here; MPICH has MPIX_GPU_query_support in mpi.h. */
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* OSU micro-benchmarks 7.x defaults (osu_util_mpi.h). */
#define LAT_LOOP_SMALL 10000
#define LAT_SKIP_SMALL 100
#define LAT_LOOP_LARGE 1000
#define LAT_SKIP_LARGE 10
#define BW_LOOP_SMALL 100
#define BW_SKIP_SMALL 10
#define BW_LOOP_LARGE 20
#define BW_SKIP_LARGE 2
#define LARGE_MESSAGE_SIZE 8192 /* sizes above it take the *_LARGE counts */
#define WINDOW_SIZE 64
#define MAX_MESSAGE_SIZE (1 << 22)
#define MAX_SIZES 64

enum test { LATENCY, BW, BIBW, TESTS };
static const char *const test_names[TESTS] = {"latency", "bw", "bibw"};

static MPI_Request send_request[WINDOW_SIZE];
static MPI_Request recv_request[WINDOW_SIZE];
static MPI_Status reqstat[WINDOW_SIZE];

static void usage_error(int rank, const char *what, const char *arg) {
    if (rank == 0) fprintf(stderr, "commatlas-osu-ref: error: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
    MPI_Finalize();
    exit(2);
}

static long parse_size(const char *text) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || v < 1 || v > (1L << 30)) return -1;
    if (*end == 'K' || *end == 'k') { v <<= 10; ++end; }
    else if (*end == 'M' || *end == 'm') { v <<= 20; ++end; }
    if (*end == 'i' && end[1] == 'B') end += 2;
    return *end == '\0' && v <= (1L << 30) ? v : -1;
}

/* What each received byte must be: OSU fills s_buf with 'a' and r_buf with 'b', so a message
 * that never arrived leaves 'b'. Checked after the timed loop only. r_buf is set once, before the
 * warm-up, as OSU does: the check proves the messages arrived, not that the timed ones did (the
 * engine poisons before each timed batch; here that would add work inside rank 0's timed window,
 * since rank 1 has no clock of its own). Records say so: verified.method "bytes_once". */
static long first_bad(const char *buf, long n) {
    for (long i = 0; i < n; ++i)
        if (buf[i] != 'a') return i;
    return -1;
}

static int on_device = 0; /* --buffers device */

/* At least the 4 bytes of osu_bw's ack, which rank 1 sends from s_buf: a 1-byte message would
 * otherwise leave 3 bytes of the ack unset, and the check would see whatever they held. */
static void set_buffers(char *s_buf, char *r_buf, long message) {
    const long size = message < 4 ? 4 : message;
#if defined(COMMATLAS_OSU_CUDA)
    if (on_device) { /* OSU 7.x set_buffer_pt2pt for 'D': cudaMemset, then synchronize */
        if (cudaMemset(s_buf, 'a', (size_t)size) != cudaSuccess || cudaMemset(r_buf, 'b', (size_t)size) != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess) {
            fprintf(stderr, "commatlas-osu-ref: error: cudaMemset of the message buffers failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return;
    }
#endif
    memset(s_buf, 'a', (size_t)size);
    memset(r_buf, 'b', (size_t)size);
}

/* The received bytes where the check can read them: device buffers are copied to the host first. */
static long first_bad_received(const char *r_buf, long n, char *host_copy) {
#if defined(COMMATLAS_OSU_CUDA)
    if (on_device) {
        if (cudaMemcpy(host_copy, r_buf, (size_t)n, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
        return first_bad(host_copy, n);
    }
#endif
    (void)host_copy;
    return first_bad(r_buf, n);
}

#if defined(COMMATLAS_OSU_CUDA)
/* The local rank as the launcher tells it before MPI_Init (OSU's init_accel reads the same
 * variables): the device must be chosen before the MPI library sets up its CUDA state. -1: none. */
static int launcher_local_rank(void) {
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                        "PMI_LOCAL_RANK", "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v);
    }
    return -1;
}
#endif

/* osu_latency: rank 0 MPI_Send + MPI_Recv, rank 1 MPI_Recv + MPI_Send; half a round trip. */
static double run_latency(int myid, char *s_buf, char *r_buf, int size, int iterations, int skip) {
    double t_start = 0.0, t_end = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (myid == 0) {
        for (int i = 0; i < iterations + skip; i++) {
            if (i == skip) t_start = MPI_Wtime();
            MPI_Send(s_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(r_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &reqstat[0]);
        }
        t_end = MPI_Wtime();
    } else if (myid == 1) {
        for (int i = 0; i < iterations + skip; i++) {
            MPI_Recv(r_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &reqstat[0]);
            MPI_Send(s_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    return t_end - t_start;
}

/* osu_bw: a window of MPI_Isend 0 -> 1 into one buffer, MPI_Waitall, a 4-byte ack 1 -> 0. */
static double run_bw(int myid, char *s_buf, char *r_buf, int size, int iterations, int skip) {
    double t_start = 0.0, t_end = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (myid == 0) {
        for (int i = 0; i < iterations + skip; i++) {
            if (i == skip) t_start = MPI_Wtime();
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Isend(s_buf, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, send_request + j);
            MPI_Waitall(WINDOW_SIZE, send_request, reqstat);
            MPI_Recv(r_buf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, &reqstat[0]);
        }
        t_end = MPI_Wtime();
    } else if (myid == 1) {
        for (int i = 0; i < iterations + skip; i++) {
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Irecv(r_buf, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, recv_request + j);
            MPI_Waitall(WINDOW_SIZE, recv_request, reqstat);
            MPI_Send(s_buf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        }
    }
    return t_end - t_start;
}

/* osu_bibw: each rank posts a window of MPI_Irecv, then a window of MPI_Isend, then waits. */
static double run_bibw(int myid, char *s_buf, char *r_buf, int size, int iterations, int skip) {
    double t_start = 0.0, t_end = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (myid == 0) {
        for (int i = 0; i < iterations + skip; i++) {
            if (i == skip) t_start = MPI_Wtime();
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Irecv(r_buf, size, MPI_CHAR, 1, 10, MPI_COMM_WORLD, recv_request + j);
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Isend(s_buf, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, send_request + j);
            MPI_Waitall(WINDOW_SIZE, send_request, reqstat);
            MPI_Waitall(WINDOW_SIZE, recv_request, reqstat);
        }
        t_end = MPI_Wtime();
    } else if (myid == 1) {
        for (int i = 0; i < iterations + skip; i++) {
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Irecv(r_buf, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, recv_request + j);
            for (int j = 0; j < WINDOW_SIZE; j++)
                MPI_Isend(s_buf, size, MPI_CHAR, 0, 10, MPI_COMM_WORLD, send_request + j);
            MPI_Waitall(WINDOW_SIZE, send_request, reqstat);
            MPI_Waitall(WINDOW_SIZE, recv_request, reqstat);
        }
    }
    return t_end - t_start;
}

/* Whether the MPI library reports CUDA support at run time; `why` says what it answered. */
static int mpi_takes_device_pointers(char *why, size_t n) {
#if defined(COMMATLAS_OSU_CUDA) && defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
#if defined(MPIX_CUDA_AWARE_SUPPORT) && !MPIX_CUDA_AWARE_SUPPORT
    snprintf(why, n, "the MPI library was built without CUDA support (MPIX_CUDA_AWARE_SUPPORT is 0)");
    return 0;
#else
    const int yes = MPIX_Query_cuda_support();
    snprintf(why, n, "MPIX_Query_cuda_support reports %s", yes ? "CUDA support" : "no CUDA support at run time");
    return yes;
#endif
#elif defined(COMMATLAS_OSU_CUDA) && defined(MPICH) && defined(MPIX_GPU_SUPPORT_CUDA)
    int yes = 0;
    if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) != MPI_SUCCESS) yes = 0;
    snprintf(why, n, "MPIX_GPU_query_support (MPICH) reports %s", yes ? "CUDA support" : "no CUDA support");
    return yes;
#else
    snprintf(why, n, "%s", "the MPI library offers no CUDA-support query: support unknown, device pointers are not passed to it");
    return 0;
#endif
}

/* The first CPU this thread may run on, alone, where each rank of the node has CPUs of its own: as
 * the engine pins its measuring thread (engine/core/affinity.h). Ranks left unbound, or sharing
 * CPUs, are left alone (they would all pin to the same one). */
static void pin_to_first_cpu(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int readable = sched_getaffinity(0, sizeof set, &set) == 0;
    MPI_Comm node;
    int ranks = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &ranks);
    cpu_set_t *all = malloc(sizeof(cpu_set_t) * (size_t)ranks);
    int own = readable && all != NULL && CPU_COUNT(&set) >= 2;
    MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_LAND, node);
    if (own) {
        MPI_Allgather(&set, (int)sizeof set, MPI_BYTE, all, (int)sizeof set, MPI_BYTE, node);
        for (int a = 0; a < ranks && own; ++a)
            for (int b = a + 1; b < ranks && own; ++b) {
                cpu_set_t both;
                CPU_AND(&both, &all[a], &all[b]);
                if (CPU_COUNT(&both) > 0) own = 0;
            }
    }
    free(all);
    MPI_Comm_free(&node);
    if (!own) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) {
            CPU_SET(c, &one);
            break;
        }
    sched_setaffinity(0, sizeof one, &one);
}

/* The CPU-pair reading, as engine/core/cpu_pair.h takes it: 2 warm-up and 3 timed batches of 64
 * round trips, the best timed batch's mean; a side that hears nothing for a second ends the job's
 * readings (both ranks agree on that after every reading). */
#define PAIR_TRIPS 64
#define PAIR_BATCHES 3
#define PAIR_WARMUP_BATCHES 2
struct pair_page {
    _Alignas(64) atomic_llong flag;  /* rank 0's odd values, rank 1's even answers */
    _Alignas(64) atomic_int partner_cpu;
};
static struct pair_page *pair = NULL; /* NULL: the ranks share no node, or a reading failed */
static MPI_Win pair_win = MPI_WIN_NULL;
static long long pair_seq = 0; /* each rank's count of the flag's values, equal between readings */

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pair_setup(int myid) {
    MPI_Comm node;
    int ranks = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &ranks);
    if (ranks == 2) {
        void *base = NULL;
        MPI_Aint bytes = 0;
        int unit = 0;
        MPI_Win_allocate_shared(myid == 0 ? (MPI_Aint)sizeof(struct pair_page) : 0, 1, MPI_INFO_NULL, node, &base,
                                &pair_win);
        MPI_Win_shared_query(pair_win, 0, &bytes, &unit, &base);
        pair = base;
        if (myid == 0) {
            atomic_init(&pair->flag, 0);
            atomic_init(&pair->partner_cpu, -1);
        }
        MPI_Barrier(node);
    }
    MPI_Comm_free(&node);
}

static int pair_wait(long long want, long long deadline) {
    for (unsigned spins = 1;; ++spins) {
        if (atomic_load_explicit(&pair->flag, memory_order_acquire) == want) return 1;
        if ((spins & 1023) == 0 && now_ns() > deadline) return 0;
    }
}

/* Both ranks call it. Rank 0 gets the round trip in ns and the two CPUs; 0 where there is none. */
static double pair_round_trip(int myid, int *cpu_a, int *cpu_b) {
    int ok = 1, all_ok = 0;
    double best = 0;
    if (pair) {
        const long long deadline = now_ns() + 1000000000LL;
        if (myid == 1) {
            atomic_store_explicit(&pair->partner_cpu, sched_getcpu(), memory_order_relaxed);
            for (int k = 0; ok && k < PAIR_TRIPS * (PAIR_WARMUP_BATCHES + PAIR_BATCHES); ++k) {
                ok = pair_wait(++pair_seq, deadline);
                if (ok) atomic_store_explicit(&pair->flag, ++pair_seq, memory_order_release);
            }
        } else {
            *cpu_a = sched_getcpu();
            for (int b = 0; ok && b < PAIR_WARMUP_BATCHES + PAIR_BATCHES; ++b) {
                const long long t0 = now_ns();
                for (int k = 0; ok && k < PAIR_TRIPS; ++k) {
                    atomic_store_explicit(&pair->flag, ++pair_seq, memory_order_release);
                    ok = pair_wait(++pair_seq, deadline);
                }
                const double ns = (double)(now_ns() - t0) / PAIR_TRIPS;
                if (b >= PAIR_WARMUP_BATCHES && (best == 0 || ns < best)) best = ns;
            }
            *cpu_b = atomic_load_explicit(&pair->partner_cpu, memory_order_relaxed);
        }
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) pair = NULL; /* the two counts may differ now: no later reading */
    return pair ? best : 0;
}

/* The copy level, as engine/backends/cuda/copy_level.h reads it beside the engine's MPI points over
 * device buffers: microseconds per 8 B synchronous cudaMemcpy, alternating device -> host and host
 * -> device (pinned host memory), the median of 5 batches of 10 pairs after one untimed batch. A
 * process copies at one of a few levels, and GPU-aware MPI's small device messages pay it (osu_bw's
 * 8 B window on 2x H200: 287-312 us where the receiver copied at the faster level, 410-475 us at the
 * slower). This job draws its own level, apart from the engine's: read right before and right
 * after each device loop, outside its clock, so that the two jobs' figures can be set beside their
 * levels. 0 where it could not be read. */
#if defined(COMMATLAS_OSU_CUDA)
#define LEVEL_BATCHES 5
#define LEVEL_COPIES 10
static char *level_host = NULL, *level_device = NULL;

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double copy_level_us(void) {
    if (!level_host && (cudaMallocHost((void **)&level_host, 8) != cudaSuccess ||
                        cudaMalloc((void **)&level_device, 8) != cudaSuccess)) {
        level_host = NULL;
        return 0;
    }
    double per_copy[LEVEL_BATCHES];
    for (int batch = 0; batch <= LEVEL_BATCHES; ++batch) {
        const long long t0 = now_ns();
        for (int i = 0; i < LEVEL_COPIES; ++i)
            if (cudaMemcpy(level_host, level_device, 8, cudaMemcpyDeviceToHost) != cudaSuccess ||
                cudaMemcpy(level_device, level_host, 8, cudaMemcpyHostToDevice) != cudaSuccess)
                return 0;
        if (batch > 0) per_copy[batch - 1] = (double)(now_ns() - t0) / 1e3 / (2.0 * LEVEL_COPIES);
    }
    qsort(per_copy, LEVEL_BATCHES, sizeof per_copy[0], by_value);
    return per_copy[LEVEL_BATCHES / 2];
}
#else
static double copy_level_us(void) { return 0; }
#endif

/* The rank's index on its node, from MPI itself (no launcher variable needed). */
static int node_local_rank(void) {
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    return local;
}

/* One sweep of the command line: its tests, sizes, passes and buffers. Sweeps are separated by
 * --then and run one after the other in one launch (a launch costs about 1 s on 2x H100). */
#define MAX_SWEEPS 4
struct sweep {
    int run[TESTS];
    long sizes[MAX_SIZES];
    int nsizes;
    int passes;
    int on_device;
    int gpu_context;
};

static const char *const usage =
    "usage: commatlas-osu-ref [--tests latency,bw,bibw] [--sizes LIST] [--buffers host|device] "
    "[--gpu-context] [--passes N] [--then SWEEP...]";

/* argv[first, last) into *w; a usage error ends the program (every rank parses the same line). */
static void parse_sweep(int myid, char *argv[], int first, int last, struct sweep *w) {
    for (int t = 0; t < TESTS; ++t) w->run[t] = 1;
    w->nsizes = 0;
    for (long v = 1; v <= MAX_MESSAGE_SIZE; v *= 2) w->sizes[w->nsizes++] = v;
    w->passes = 1;
    w->on_device = 0;
    w->gpu_context = 0;
    for (int a = first; a < last; ++a) {
        const int has_value = a + 1 < last;
        if (strcmp(argv[a], "--tests") == 0 && has_value) {
            char *list = argv[++a];
            memset(w->run, 0, sizeof w->run);
            for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
                int found = 0;
                for (int t = 0; t < TESTS; ++t)
                    if (strcmp(item, test_names[t]) == 0) w->run[t] = found = 1;
                if (!found) usage_error(myid, "unknown test (latency, bw, bibw)", item);
            }
        } else if (strcmp(argv[a], "--sizes") == 0 && has_value) {
            w->nsizes = 0;
            for (char *item = strtok(argv[++a], ","); item; item = strtok(NULL, ",")) {
                const long v = parse_size(item);
                if (v < 0) usage_error(myid, "a size is a number of bytes from 1 to 1 GiB (K/M suffixes allowed)", item);
                if (w->nsizes == MAX_SIZES) usage_error(myid, "too many sizes", NULL);
                w->sizes[w->nsizes++] = v;
            }
            if (w->nsizes == 0) usage_error(myid, "--sizes is empty", NULL);
        } else if (strcmp(argv[a], "--buffers") == 0 && has_value) {
            const char *kind = argv[++a];
            if (strcmp(kind, "host") != 0 && strcmp(kind, "device") != 0)
                usage_error(myid, "--buffers is host or device", kind);
#if !defined(COMMATLAS_OSU_CUDA)
            if (strcmp(kind, "device") == 0)
                usage_error(myid, "--buffers device needs a CUDA build of commatlas-osu-ref; this one has none", NULL);
#endif
            w->on_device = strcmp(kind, "device") == 0;
        } else if (strcmp(argv[a], "--passes") == 0 && has_value) {
            char *end = NULL;
            const long n = strtol(argv[++a], &end, 10);
            if (end == argv[a] || *end != '\0' || n < 1 || n > 10) usage_error(myid, "--passes is a whole number from 1 to 10", argv[a]);
            w->passes = (int)n;
        } else if (strcmp(argv[a], "--gpu-context") == 0) {
#if !defined(COMMATLAS_OSU_CUDA)
            usage_error(myid, "--gpu-context needs a CUDA build of commatlas-osu-ref; this one has none", NULL);
#endif
            w->gpu_context = 1;
        } else {
            usage_error(myid, usage, NULL);
        }
    }
}

int main(int argc, char *argv[]) {
    int myid = 0, numprocs = 0;
    /* A sweep on device buffers picks the GPU before MPI_Init, as OSU does; the host sweeps of the
     * same launch then run with that context, made before MPI_Init (their lines say so). */
    int any_device = 0;
    for (int a = 1; a + 1 < argc; ++a)
        if (strcmp(argv[a], "--buffers") == 0 && strcmp(argv[a + 1], "device") == 0) any_device = 1;
    int gpu = -1;
#if defined(COMMATLAS_OSU_CUDA)
    int gpus = 0;
    const int local_before = launcher_local_rank();
    if (any_device && cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0 && local_before >= 0) {
        gpu = local_before % gpus;
        cudaSetDevice(gpu);
    }
#endif
    const int context_before_init = gpu >= 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &myid);
    MPI_Comm_size(MPI_COMM_WORLD, &numprocs);

    struct sweep sweeps[MAX_SWEEPS];
    int nsweeps = 0;
    for (int first = 1; first <= argc;) {
        int last = first;
        while (last < argc && strcmp(argv[last], "--then") != 0) ++last;
        if (last == first && (nsweeps > 0 || last < argc)) usage_error(myid, "--then needs a sweep on each side", NULL);
        if (nsweeps == MAX_SWEEPS) usage_error(myid, "too many sweeps (--then)", NULL);
        parse_sweep(myid, argv, first, last, &sweeps[nsweeps++]);
        first = last + 1;
    }
    if (numprocs != 2) usage_error(myid, "the OSU reference needs exactly two ranks", NULL);
    int gpu_context = 0, device_refused = 0;
    for (int k = 0; k < nsweeps; ++k) gpu_context |= sweeps[k].gpu_context;
    if (any_device) {
        char why[200];
        if (!mpi_takes_device_pointers(why, sizeof why)) {
            /* The device sweeps are left out, the others run; the exit status says so (3). */
            if (myid == 0) fprintf(stderr, "commatlas-osu-ref: error: --buffers device: %s\n", why);
            device_refused = 1;
            int others = 0;
            for (int k = 0; k < nsweeps; ++k) others |= !sweeps[k].on_device;
            if (!others) {
                MPI_Finalize();
                exit(3);
            }
        }
    }
    /* Whether the ranks hold a CUDA context for the sweeps: asked for (--gpu-context), or needed
     * for device buffers, or made before MPI_Init already. */
    int has_context = 0;
#if defined(COMMATLAS_OSU_CUDA)
    const int device_runs = any_device && !device_refused;
    if ((device_runs || gpu_context) && gpu < 0) {
        if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
            fprintf(stderr, "commatlas-osu-ref: error: %s: no GPU visible to rank %d\n",
                    device_runs ? "--buffers device" : "--gpu-context", myid);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        gpu = node_local_rank() % gpus;
        cudaSetDevice(gpu);
    }
    /* The context itself, now: before CUDA 12 cudaSetDevice left it to the first call that needs one. */
    if (gpu >= 0) {
        if (cudaFree(0) != cudaSuccess) {
            fprintf(stderr, "commatlas-osu-ref: error: no CUDA context on GPU %d (rank %d)\n", gpu, myid);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        has_context = 1;
    }
#endif
    pin_to_first_cpu(); /* after the CUDA context: its threads keep the whole set */
    pair_setup(myid);
    int gpu_of[2] = {gpu, gpu};
    MPI_Gather(&gpu, 1, MPI_INT, gpu_of, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (int k = 0; k < nsweeps; ++k) {
        const struct sweep *w = &sweeps[k];
        if (w->on_device && device_refused) continue;
        on_device = w->on_device;
        /* A host sweep in a process that holds a context (asked for, or made for a device sweep). */
        const int holds_context = !on_device && has_context;
        long largest = 4;
        for (int i = 0; i < w->nsizes; ++i)
            if (w->sizes[i] > largest) largest = w->sizes[i];
        /* One send and one receive buffer, page-aligned, reused by every message (OSU's
         * allocate_memory_pt2pt with one buffer each). */
        const long page = sysconf(_SC_PAGESIZE);
        char *s_buf = NULL, *r_buf = NULL, *check = NULL;
#if defined(COMMATLAS_OSU_CUDA)
        if (on_device) {
            /* OSU's allocate_device_buffer: cudaMalloc; the host copy is for the check after the loop. */
            if (cudaMalloc((void **)&s_buf, (size_t)largest) != cudaSuccess ||
                cudaMalloc((void **)&r_buf, (size_t)largest) != cudaSuccess || !(check = malloc((size_t)largest))) {
                fprintf(stderr, "commatlas-osu-ref: error: cannot allocate two device buffers of %ld bytes on GPU %d\n",
                        largest, gpu);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
#endif
        if (!on_device && (posix_memalign((void **)&s_buf, (size_t)page, (size_t)largest) != 0 ||
                           posix_memalign((void **)&r_buf, (size_t)page, (size_t)largest) != 0)) {
            fprintf(stderr, "commatlas-osu-ref: error: cannot allocate two buffers of %ld bytes\n", largest);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }

        for (int pass = 1; pass <= w->passes; ++pass)
        for (int t = 0; t < TESTS; ++t) {
            if (!w->run[t]) continue;
            for (int i = 0; i < w->nsizes; ++i) {
                const int size = (int)w->sizes[i];
                const int large = size > LARGE_MESSAGE_SIZE;
                const int iterations = t == LATENCY ? (large ? LAT_LOOP_LARGE : LAT_LOOP_SMALL)
                                                    : (large ? BW_LOOP_LARGE : BW_LOOP_SMALL);
                const int skip = t == LATENCY ? (large ? LAT_SKIP_LARGE : LAT_SKIP_SMALL)
                                              : (large ? BW_SKIP_LARGE : BW_SKIP_SMALL);
                set_buffers(s_buf, r_buf, size);
                double level[2] = {0, 0}; /* this rank's copy level right before and after the loop */
                if (on_device) level[0] = copy_level_us();
                double seconds = 0;
                if (t == LATENCY) seconds = run_latency(myid, s_buf, r_buf, size, iterations, skip);
                else if (t == BW) seconds = run_bw(myid, s_buf, r_buf, size, iterations, skip);
                else seconds = run_bibw(myid, s_buf, r_buf, size, iterations, skip);
                double levels[4] = {0, 0, 0, 0}; /* rank 0's two readings, then rank 1's */
                if (on_device) {
                    level[1] = copy_level_us();
                    MPI_Gather(level, 2, MPI_DOUBLE, levels, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                }

                /* Rank 1 received the full message in every test, rank 0 in latency and bibw (bw:
                 * the 4-byte ack). Both ranks' verdicts reach rank 0. */
                const long expect = myid == 0 && t == BW ? 4 : size;
                long bad[2] = {first_bad_received(r_buf, expect, check), 0};
                long all_bad[4] = {-1, 0, -1, 0};
                MPI_Gather(bad, 2, MPI_LONG, all_bad, 2, MPI_LONG, 0, MPI_COMM_WORLD);
                int cpu_a = -1, cpu_b = -1;
                const double pair_ns = pair_round_trip(myid, &cpu_a, &cpu_b);
                if (myid != 0) continue;
                printf("{\"test\":\"osu_%s\",\"bytes\":%d,\"buffers\":\"%s\",", test_names[t], size,
                       on_device ? "device" : "host");
                if (on_device) printf("\"gpus\":[%d,%d],", gpu_of[0], gpu_of[1]);
                if (holds_context)
                    printf("\"gpu_context\":true,\"context_made\":\"%s\",",
                           context_before_init ? "before MPI_Init" : "after MPI_Init");
                if (w->passes > 1) printf("\"pass\":%d,", pass);
                if (t == LATENCY)
                    printf("\"latency_us\":%.6g,", seconds * 1e6 / (2.0 * iterations));
                else
                    printf("\"mb_per_s\":%.6g,\"window\":%d,",
                           size / 1e6 * iterations * WINDOW_SIZE * (t == BIBW ? 2 : 1) / seconds, WINDOW_SIZE);
                printf("\"seconds\":%.9g,\"iterations\":%d,\"skip\":%d,", seconds, iterations, skip);
                if (on_device) { /* per rank [before, after], as the engine's records keep it */
                    printf("\"copy_level_us\":[");
                    for (int k = 0; k < 4; ++k) {
                        printf("%s", k == 0 ? "[" : k == 2 ? "],[" : ",");
                        if (levels[k] > 0) printf("%.6g", levels[k]);
                        else printf("null");
                    }
                    printf("]],");
                }
                if (pair_ns > 0)
                    printf("\"cpu_pair\":{\"cpus\":[%d,%d],\"round_trip_ns\":%.1f},", cpu_a, cpu_b, pair_ns);
                else
                    printf("\"cpu_pair\":null,");
                if (all_bad[0] >= 0 || all_bad[2] >= 0) {
                    const int rank = all_bad[0] >= 0 ? 0 : 1;
                    printf("\"verified\":false,\"detail\":\"rank %d: byte %ld of the message differs from what was sent\"}\n",
                           rank, all_bad[2 * rank]);
                } else {
                    printf("\"verified\":true,\"bytes_checked\":%ld}\n", (t == BW ? 4L : (long)size) + size);
                }
                fflush(stdout);
            }
        }
#if defined(COMMATLAS_OSU_CUDA)
        if (on_device) {
            cudaFree(s_buf);
            cudaFree(r_buf);
            free(check);
            s_buf = r_buf = NULL;
        }
#endif
        free(s_buf);
        free(r_buf);
    }
#if defined(COMMATLAS_OSU_CUDA)
    if (level_host) {
        cudaFreeHost(level_host);
        cudaFree(level_device);
    }
#endif
    if (pair_win != MPI_WIN_NULL) MPI_Win_free(&pair_win);
    MPI_Finalize();
    return device_refused ? 3 : 0;
}
