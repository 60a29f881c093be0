"""The OSU-method reference: `commatlas-osu-ref` (engine/tools/osu_reference.c) runs osu_latency,
osu_bw and osu_bibw as the OSU micro-benchmarks 7.x do, in a process of its own, under the same
launcher as the engine's MPI phase. Its JSON lines become result records here, and
`comparison_rows` sets the engine's mpi.pingpong / mpi.bandwidth / mpi.bibw beside them (host
buffers), and mpi.gpu_aware.* on device buffers beside `--buffers device` (OSU's `-d cuda D D`),
which runs only where the engine's GPU-aware device points ran, i.e. where MPI reported CUDA support.

It is the one deliberate exception to "one timing harness": it shares nothing with the engine but
the launcher, so a cost of the engine process (threads, libraries, MPI set-up) shows as a
difference instead of hiding in a loop that pays it too."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from commatlas.analysis.agreement import Verdict, judge
from commatlas.analysis.host_activity import host_between
from commatlas.analysis.process_state import level_explains
from commatlas.io.points import engine_point_key as _point_key
from commatlas.io.engine import Engine
from commatlas.io.lines import json_object
from commatlas.io.results import Result, run_from_records
from commatlas.units import format_gbps, format_latency_us

REFERENCE_PROGRAM = "commatlas-osu-ref"
# OSU test -> (the record's benchmark key, the engine benchmark it checks, the --tests name).
TESTS: dict[str, tuple[str, str, str]] = {
    "osu_latency": ("reference.osu_latency", "mpi.pingpong", "latency"),
    "osu_bw": ("reference.osu_bw", "mpi.bandwidth", "bw"),
    "osu_bibw": ("reference.osu_bibw", "mpi.bibw", "bibw"),
}
# The same tests on device buffers check the GPU-aware benchmarks' device -> device variant.
DEVICE_CHECKS: dict[str, str] = {
    "osu_latency": "mpi.gpu_aware.pingpong", "osu_bw": "mpi.gpu_aware.bandwidth", "osu_bibw": "mpi.gpu_aware.bibw"}
BUFFERS = ("host", "device")
CHECKED = {engine_key: test for test, (_, engine_key, _) in TESTS.items()}
CHECKED.update({engine_key: test for test, engine_key in DEVICE_CHECKS.items()})
# The buffers each checked benchmark's compared variant uses.
CHECKED_BUFFERS = {engine_key: "device" if engine_key in DEVICE_CHECKS.values() else "host" for engine_key in CHECKED}


def checked_benchmark(test: str, buffers: str) -> str:
    """The engine benchmark an OSU test on these buffers checks."""
    return DEVICE_CHECKS[test] if buffers == "device" else TESTS[test][1]


def compared(record: dict[str, Any]) -> bool:
    """Whether an engine record is the variant its reference measures: GPU-aware benchmarks have an
    allocator matrix, and only device -> device is OSU's `D D`."""
    key = record.get("benchmark", "")
    if key not in CHECKED:
        return False
    return CHECKED_BUFFERS[key] == "host" or (record.get("params") or {}).get("allocator") == "device"
# commatlas-osu-ref's exit status when asked for device buffers that the MPI library cannot take.
REFUSED_DEVICE_BUFFERS = 3
# OSU's largest default message (MAX_MESSAGE_SIZE): larger host points are not compared. Device
# buffers go on to 16 MiB (OSU's -m), where the GPU-aware defaults end and NVLink reaches its plateau.
LARGEST_BYTES = 4 << 20
LARGEST_DEVICE_BYTES = 16 << 20
# The OSU-method rule: engine and reference agree when their medians differ by at most 3% or by
# the reference's own round-to-round spread, whichever is larger.
AGREE_FRACTION = 0.03


_SHAPE = {"osu_latency": ("ping_pong", "half_round_trip"), "osu_bw": ("send_recv", "uni"),
          "osu_bibw": ("send_recv", "bi")}


def _endpoint(rank: int, gpu: int | None = None) -> dict[str, Any]:
    if gpu is not None:
        return {"memory": "gpu", "gpu": gpu, "numa": None, "rank": rank, "node": None, "processor": False,
                "allocator": "device", "first_touch": "gpu"}
    return {"memory": "host", "gpu": None, "numa": None, "rank": rank, "node": None, "processor": False,
            "allocator": "pageable", "first_touch": "cpu"}


def reference_movement(test: str, engine_movement: dict[str, Any] | None = None, buffers: str = "host",
                       gpus: tuple[int, int] | None = None) -> dict[str, Any]:
    """The movement of the engine benchmark the test checks (taken from its record where there is
    one, so both land on the same movement key), marked `reference_of`."""
    operation, direction = _SHAPE[test]
    on_gpu = buffers == "device"
    ends = gpus if on_gpu and gpus else (None, None)
    movement = dict(engine_movement) if engine_movement else {
        "operation": operation, "direction": direction, "mechanism": "mpi_gpu_aware" if on_gpu else "mpi_host",
        "from": _endpoint(0, ends[0]), "to": _endpoint(1, ends[1]), "choices": {}, "same_node": True}
    movement.pop("cache_resident", None)
    movement["reference_of"] = checked_benchmark(test, buffers)
    return movement


def engine_movements(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The movement each checked engine benchmark's compared variant declares."""
    return {r["benchmark"]: r["movement"] for r in records
            if r.get("type") == "result" and compared(r) and r.get("movement")}


def reference_path(engine_path: Path) -> Path | None:
    """The reference is installed next to the engine (CMake puts both in one folder)."""
    path = engine_path.parent / REFERENCE_PROGRAM
    return path if path.is_file() else None


REFERENCE_KEYS = {key: test for test, (key, _, _) in TESTS.items()}
HOST_CHECKED = {engine_key: test for test, (_, engine_key, _) in TESTS.items()}
_DESCRIPTION = {"osu_latency": "OSU-method ping-pong (osu_latency's loop), host buffers",
                "osu_bw": "OSU-method bandwidth (osu_bw's windows), host buffers",
                "osu_bibw": "OSU-method bidirectional bandwidth (osu_bibw's windows), host buffers"}


def with_references(benchmarks: list[dict[str, Any]], engine_path: Path) -> list[dict[str, Any]]:
    """The engine's benchmarks and, after each one the OSU method checks, its reference point
    (`reference.osu_*`), so `list` shows them and --only/--exclude select them like any other.
    They run in their own program after the MPI phase, at the sizes the engine benchmark they
    check measured: selecting one runs that benchmark too."""
    program = reference_path(engine_path)
    out: list[dict[str, Any]] = []
    for b in benchmarks:
        out.append(b)
        # One listed reference per OSU test: the host benchmark it checks (the device run of the same
        # test follows the GPU-aware points wherever those ran).
        test = HOST_CHECKED.get(b.get("key", ""))
        if test is None:
            continue
        runnable, reason = bool(b.get("runnable")), str(b.get("reason") or "")
        if program is None:
            runnable, reason = False, f"{REFERENCE_PROGRAM} is not installed next to the engine"
        out.append({"key": TESTS[test][0], "category": "reference", "interface": "mpi", "suite": b["suite"],
                    "metric": b["metric"], "description": _DESCRIPTION[test], "min_ranks": 2, "max_ranks": 2,
                    "runnable": runnable, "reason": reason, "reference_of": b["key"], "runs_in": REFERENCE_PROGRAM})
    return out


def is_reference(benchmark: dict[str, Any]) -> bool:
    return benchmark.get("key") in REFERENCE_KEYS


def tests_and_sizes(records: Iterable[dict[str, Any]], buffers: str = "host",
                    selected: Iterable[str] | None = None) -> tuple[list[str], list[int]]:
    """The OSU tests that check benchmarks of these records on these buffers, and the sizes those
    measured; `selected`: only these reference keys (None: every one). Device: only where the
    engine's GPU-aware device points have results, i.e. where the MPI library reported CUDA
    support to the engine (a Skip otherwise)."""
    wanted = None if selected is None else {REFERENCE_KEYS[k] for k in selected}
    tests: set[str] = set()
    sizes: set[int] = set()
    for r in records:
        test = CHECKED.get(r.get("benchmark", ""))
        if wanted is not None and test not in wanted:
            continue
        if (r.get("type") == "result" and test and compared(r) and CHECKED_BUFFERS[r["benchmark"]] == buffers
                and r.get("bytes") and r["bytes"] <= (LARGEST_DEVICE_BYTES if buffers == "device" else LARGEST_BYTES)):
            tests.add(TESTS[test][2])
            sizes.add(int(r["bytes"]))
    order = [t for _, _, t in TESTS.values()]
    return sorted(tests, key=order.index), sorted(sizes)


# Sweeps the reference runs one after the other: OSU times each size once, and a figure is called
# precise only where a second measurement, later, agrees (the engine's confirmation batch). The
# second pass becomes the point's stability record; without it the one loop's figure could not say
# whether it repeats (on 2x H100 the host references moved up to 1.98x between identical runs).
PASSES = 2


def reference_arguments(tests: list[str], sizes: list[int], buffers: str = "host", gpu_context: bool = False) -> list[str]:
    """`gpu_context`: the engine's ranks hold a CUDA context (ranks_hold_gpu_context), so the
    reference makes one too; on device buffers it has one anyway."""
    return ["--tests", ",".join(tests), "--sizes", ",".join(str(s) for s in sizes),
            *(["--buffers", buffers] if buffers != "host" else []),
            *(["--gpu-context"] if gpu_context and buffers == "host" else []), "--passes", str(PASSES)]


def sweeps_arguments(sweeps: list[tuple[str, list[str], list[int]]], gpu_context: bool = False) -> list[str]:
    """One launch for every (buffers, tests, sizes) sweep, one after the other (`--then`): a launch
    of the program took 0.86-1.09 s bare on 2x H100 (MPI_Init, CUDA set-up, MPI_Finalize), and one
    launch for a run's host and device sweeps saved 0.6-0.7 s of its default run. With a device
    sweep, each rank's GPU is chosen before MPI_Init (OSU's order), and the host sweep runs with
    that context (its lines say "context_made")."""
    arguments: list[str] = []
    for buffers, tests, sizes in sweeps:
        arguments += (["--then"] if arguments else []) + reference_arguments(tests, sizes, buffers, gpu_context)
    return arguments


def ranks_hold_gpu_context(engine_info: dict[str, Any]) -> bool:
    """Whether the engine's MPI ranks hold a CUDA context from their start: a CUDA build with MPI
    that sees a GPU makes one at once (bind_rank_to_gpu). A CUDA-aware MPI pays for a context on
    host buffers too (on 2x H100 the 1-64 B bibw read 0.55-0.65x with one), so the reference runs
    in the same condition: a cost of the process, not of the engine's harness. (A HIP build's
    ranks hold a HIP context; the reference has no HIP build to match it.)"""
    backends = engine_info.get("backends") or {}
    mpi, cuda = backends.get("mpi") or {}, backends.get("cuda") or {}
    return bool(mpi.get("built")) and bool(cuda.get("built")) and int(cuda.get("device_count") or 0) > 0


def _method(test: str, iterations: int, skip: int, window: int | None, buffers: str = "host",
            gpu_context: bool = False, context_made: str | None = None) -> str:
    what = ("MPI_Send + MPI_Recv round trips, total / (2 x iterations)" if test == "osu_latency"
            else f"windows of {window} MPI_Isend/MPI_Irecv + MPI_Waitall"
            + (", a 4-byte ack" if test == "osu_bw" else " each way") + ", total / iterations")
    on = (" on cudaMalloc buffers (-d cuda D D)" if buffers == "device"
          else ", each rank holding its GPU's CUDA context as the engine's do (--gpu-context)" if gpu_context else "")
    if context_made and buffers != "device":
        on += f", made {context_made}"
    return (f"{test} (OSU micro-benchmarks 7.x method) in its own process ({REFERENCE_PROGRAM}){on}: "
            f"MPI_Wtime on rank 0 around {iterations} {what}, after {skip} skipped")


def reference_total(tests: list[str], sizes: list[int], passes: int = PASSES) -> int:
    """Lines the reference will print: one per test, size and pass, as it measures them."""
    return len(tests) * len(sizes) * passes


def _output(line: str) -> dict[str, Any] | None:
    """One of the reference's JSON lines, or None (launcher noise)."""
    out = json_object(line)
    return out if out is not None and out.get("test") in TESTS else None


def progress_point(line: str) -> dict[str, Any] | None:
    """A reference line as a progress point, in the engine's event shape ("osu_bw 1 MiB 10.6 GB/s")."""
    out = _output(line)
    if out is None:
        return None
    name = out["test"] + (" D D" if out.get("buffers") == "device" else "")
    event: dict[str, Any] = {"event": "point", "benchmark": name, "bytes": out.get("bytes"),
                             "status": "ok" if out.get("verified") else "data check failed"}
    if out.get("latency_us") is not None:
        event["median_s"] = float(out["latency_us"]) / 1e6
    if out.get("mb_per_s") is not None:
        event["gbps"] = float(out["mb_per_s"]) / 1e3
    return event


# The figure each test's progress point is about (progress.describe_point's `metric`).
PROGRESS_METRICS = {name: "latency" if test == "osu_latency" else "bandwidth"
                    for test in TESTS for name in (test, test + " D D")}


def reference_measurements(lines: Iterable[str], ranks: int, repeat: int | None = None,
                           env: tuple[tuple[str, str], ...] = (), now: float | None = None,
                           movements: dict[str, dict[str, Any]] | None = None,
                           mpi_library: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The reference's JSON lines as measurements for `commatlas-engine ingest`, which writes their
    records (engine/core/ingest.h); lines that are not its output (launcher noise) are ignored.
    `mpi_library`: the engine records' library (the reference is built against the same one), so
    each library's figures pair with its own reference."""
    measurements = []
    stamp = time.time() if now is None else now
    outputs = [out for out in map(_output, lines) if out is not None]
    # The later pass of each (test, buffers, size): its confirmation (PASSES).
    later = {(o["test"], o.get("buffers"), int(o["bytes"])): o for o in outputs if int(o.get("pass") or 1) > 1}
    for out in outputs:
        if int(out.get("pass") or 1) > 1:
            continue
        again = later.get((out["test"], out.get("buffers"), int(out["bytes"])))
        if again is not None and not again.get("verified"):
            out = again  # a pass that saw wrong bytes fails the point, whichever pass it was
        test = out["test"]
        buffers = "device" if out.get("buffers") == "device" else "host"
        benchmark, checks = TESTS[test][0], checked_benchmark(test, buffers)
        size = int(out["bytes"])
        gpus = out.get("gpus")
        gpu_pair = (int(gpus[0]), int(gpus[1])) if isinstance(gpus, list) and len(gpus) == 2 else None
        identity: dict[str, Any] = {
            "benchmark": benchmark, "category": "reference", **_where(buffers),
            "metric": "latency" if test == "osu_latency" else "bandwidth",
            "params": _params(checks, buffers, env),
            "movement": reference_movement(test, (movements or {}).get(checks), buffers, gpu_pair),
            "bytes": size, "ranks": ranks, "time": round(stamp, 3),
        }
        if repeat is not None:
            identity["repeat"] = repeat
        if mpi_library:
            identity["mpi_library"] = mpi_library
        if not out.get("verified"):
            measurements.append({"type": "error", **identity,
                                 "message": f"data check failed: {out.get('detail', 'the reference saw wrong bytes')}"})
            continue
        iterations, window = int(out["iterations"]), out.get("window")
        per_op = _per_op(out)
        bytes_per_op = float(size if test == "osu_latency" else size * window * (2 if test == "osu_bibw" else 1))
        confirmation = ({"confirmation": {"median_s": _per_op(again), "samples": 1, **_activity(again)}}
                        if again is not None and again.get("verified") else {})
        measurements.append({**confirmation,
            "type": "result", **identity, "bytes_per_op": bytes_per_op,
            "timing": {"method": _method(test, iterations, int(out["skip"]), window, buffers, bool(out.get("gpu_context")),
                                         out.get("context_made")),
                       "ops_per_sample": iterations, "warmup_samples": int(out["skip"]), "max_over_ranks": False,
                       **_activity(out), **_copy_levels(out)},
            # One sample: OSU times the whole loop once.
            "samples_s": [per_op],
            "latency_includes": ("half a round trip, bare osu_latency loop" if test == "osu_latency"
                                 else f"one window (osu_{test[4:]}), bare loop"),
            # OSU fills r_buf once, before its warm-up: the check cannot say the timed messages
            # arrived, only that messages did (docs/results-format.md, Verification).
            "verified": {"ok": True, "bytes_checked": int(out.get("bytes_checked", 0)), "method": "bytes_once"},
        })
    return measurements


def _activity(out: dict[str, Any]) -> dict[str, Any]:
    """Where the host had put the two ranks' CPUs right after one of the reference's passes, as the
    engine records it beside its own (`host_activity` with the pass's window and its `cpu_pair`;
    the program reads no host counters). Empty for lines of a program that did not say."""
    if "cpu_pair" not in out:
        return {}
    return {"host_activity": {"window_s": float(out["seconds"]), "cpu_pair": out["cpu_pair"]}}


def _copy_levels(out: dict[str, Any]) -> dict[str, Any]:
    """Each rank's copy level right before and right after a device loop, as the engine records its
    own (`timing.copy_level_us`): the reference's job draws its level apart from the engine's, and
    small device messages pay it. Empty for host lines, and for lines of a program that did not say."""
    levels = out.get("copy_level_us")
    return {"copy_level_us": levels} if isinstance(levels, list) and levels else {}


def _per_op(out: dict[str, Any]) -> float:
    """Seconds per op of one of the reference's lines: half a round trip, or one window."""
    iterations, seconds = int(out["iterations"]), float(out["seconds"])
    return seconds / (2 * iterations) if out["test"] == "osu_latency" else seconds / iterations


def reference_records(engine: Engine, lines: Iterable[str], ranks: int, repeat: int | None = None,
                      env: tuple[tuple[str, str], ...] = (), now: float | None = None,
                      movements: dict[str, dict[str, Any]] | None = None,
                      mpi_library: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Result (or error) records from the reference's JSON lines, as the engine writes them."""
    return engine.ingested(reference_measurements(lines, ranks, repeat, env, now, movements, mpi_library))


def _where(buffers: str) -> dict[str, str]:
    """The interface and suite of the benchmarks the reference checks."""
    return {"interface": "mpi_gpu_aware", "suite": "mpi-gpu"} if buffers == "device" else {"interface": "mpi", "suite": "mpi"}


def _params(checks: str, buffers: str, env: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    # Host records keep the point keys they had before device buffers existed.
    params: dict[str, Any] = {"method": "osu", "reference_of": checks}
    if buffers != "host":
        params["buffers"] = buffers
    params.update({f"env.{name}": value for name, value in env})
    return params


@dataclass(frozen=True)
class ComparisonRow:
    """One size of one engine benchmark beside its OSU-method reference (medians over passes)."""
    benchmark: str
    bytes: int
    metric: str             # latency (us) or bandwidth (MB/s, OSU's unit; shown in GB/s)
    engine: float
    reference: float
    rounds: int             # passes that measured both
    reference_spread: float  # (max - min) / median of the reference over the passes
    ratio: float            # engine / reference
    agree: bool             # the acceptance rule: within 3% or the reference's own spread
    engine_spread: float = 0.0  # the same for the engine's figures
    library: str = ""       # the MPI library both ran on ("Open MPI 4.1.4"); "" in older runs
    # What the host did to a pass of either figure, or how it placed the two jobs' CPUs apart the way
    # the figures differ (commatlas.analysis.host_activity); "" where the records do not show it.
    host: str = ""
    # How the two jobs' ranks copied to and from their GPUs at different levels, the way the figures
    # differ (commatlas.analysis.process_state); "" where they did not, or a side has no readings.
    job_state: str = ""

    @property
    def verdict(self) -> Verdict:
        """What the comparison means: agrees, the machine did not repeat (the wider of the two own
        spreads covers the difference), one pass (spread unknown), or slower/faster beyond it."""
        difference = self.ratio - 1.0
        slower = difference > 0 if self.metric == "latency" else difference < 0
        spread = max(self.reference_spread, self.engine_spread) if self.rounds > 1 else None
        return judge(within_rule=abs(difference) <= AGREE_FRACTION, difference=difference, spread=spread,
                     slower=slower, subject="the engine", reference="the reference", host=self.host,
                     job_state=self.job_state)

    @property
    def engine_text(self) -> str:
        return format_figure(self.engine, self.metric)

    @property
    def reference_text(self) -> str:
        return format_figure(self.reference, self.metric)


def format_figure(value: float, metric: str) -> str:
    """In the units every other table uses (GB/s; ns, us, ms), not OSU's MB/s: one convention
    on the screen. `value` is in OSU's units (us, MB/s)."""
    return format_latency_us(value) if metric == "latency" else format_gbps(value / 1000.0)


def _figure(record: dict[str, Any]) -> float | None:
    if record.get("metric") == "latency":
        return record.get("latency_us")
    gbps = record.get("bandwidth_gbps")
    return gbps * 1000.0 if gbps is not None else None


def _pass_of(record: dict[str, Any]) -> tuple[Any, ...]:
    env = tuple(sorted((k, v) for k, v in (record.get("params") or {}).items() if k.startswith("env.")))
    return (record.get("repeat"), env)


def library_label(record: dict[str, Any]) -> str:
    """"Open MPI 4.1.4": the MPI library a record ran on, "" where the record does not say."""
    library = record.get("mpi_library") or {}
    return " ".join(str(library[k]) for k in ("name", "version") if library.get(k))


def comparison_rows(records: Iterable[dict[str, Any]]) -> list[ComparisonRow]:
    """Engine vs OSU-method reference per (benchmark, size), for the report and the summary.
    Figures are paired by pass (repeat and swept environment), so rounds stay interleaved."""
    engine: dict[tuple[str, str, int], dict[tuple[Any, ...], float]] = {}
    reference: dict[tuple[str, str, int], dict[tuple[Any, ...], float]] = {}
    kept: dict[tuple[str, str, str, int], dict[tuple[Any, ...], dict[str, Any]]] = {}  # the records behind each
    stability: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("type") == "stability" and r.get("point"):
            stability[r["point"]] = r
        if r.get("type") != "result" or r.get("bytes") is None:
            continue
        value = _figure(r)
        if value is None:
            continue
        key = r["benchmark"]
        # One run may hold several libraries (commatlas run --mpi a,b): each pairs with its own.
        library = library_label(r)
        if key in CHECKED:
            if not compared(r):
                continue
            engine.setdefault((key, library, r["bytes"]), {})[_pass_of(r)] = value
            kept.setdefault(("engine", key, library, r["bytes"]), {})[_pass_of(r)] = r
        elif key in (b for b, _, _ in TESTS.values()) and r.get("params", {}).get("reference_of") in CHECKED:
            reference.setdefault((r["params"]["reference_of"], library, r["bytes"]), {})[_pass_of(r)] = value
            kept.setdefault(("reference", r["params"]["reference_of"], library, r["bytes"]), {})[_pass_of(r)] = r
    rows = []
    for (benchmark, library, size), by_pass in sorted(engine.items()):
        ref = reference.get((benchmark, library, size), {})
        passes = sorted(set(by_pass) & set(ref), key=repr)
        if not passes:
            continue
        mine = [by_pass[p] for p in passes]
        e = statistics.median(mine)
        refs = [ref[p] for p in passes]
        o = statistics.median(refs)
        spread = (max(refs) - min(refs)) / o if o > 0 else 0.0
        engine_spread = (max(mine) - min(mine)) / e if e > 0 else 0.0
        agree = abs(e - o) / o <= max(AGREE_FRACTION, spread) if o > 0 else False
        metric = "latency" if CHECKED[benchmark] == "osu_latency" else "bandwidth"
        side = {name: _results([kept[name, benchmark, library, size][p] for p in passes], stability)
                for name in ("engine", "reference")}
        host, job_state = _jobs(side["engine"], side["reference"], e, o, metric)
        rows.append(ComparisonRow(benchmark, size, metric, e, o, len(passes), spread, e / o if o else 0.0, agree,
                                  engine_spread, library, host, job_state))
    return rows


def _results(records: list[dict[str, Any]], stability: dict[str, dict[str, Any]]) -> list[Result]:
    """The records of one side of a row as Results, each with its point's stability record (its
    confirmation pass's host activity)."""
    extra = [stability[r["point"]] for r in records if r.get("point") in stability]
    return run_from_records(records + extra).results


def _jobs(engine: list[Result], reference: list[Result], e: float, o: float, metric: str) -> tuple[str, str]:
    """What the machine did to the engine's and the reference's jobs that can explain their figures'
    difference, as harness_check asks of its pairs: the host in the way of a pass, or the two jobs'
    CPUs placed apart (`host`); the two jobs' ranks copying at different levels (`job_state`)."""
    names = ("the engine's job", "the reference's job")
    host = host_between(engine, reference, e, o, names)
    # The table says once what a copy level does (agreement.MEANING), so each row keeps to its readings.
    job_state = level_explains(reference, engine, o, e, metric, names[::-1], why=False) or ""
    return host, job_state


def reference_skips(reason: str, ranks: int, repeat: int | None = None,
                    env: tuple[tuple[str, str], ...] = (), tests: Iterable[str] = (),
                    buffers: str = "host", mpi_library: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Benchmark-wide skip measurements (for `commatlas-engine ingest`) for the OSU tests that could
    not run (e.g. not two ranks)."""
    measurements = []
    for test, (benchmark, _, name) in TESTS.items():
        if name not in tests:
            continue
        measurement: dict[str, Any] = {
            "type": "skip", "benchmark": benchmark, "category": "reference", **_where(buffers),
            "metric": "latency" if test == "osu_latency" else "bandwidth",
            "params": _params(checked_benchmark(test, buffers), buffers, env),
            "movement": reference_movement(test, buffers=buffers), "bytes": None, "ranks": ranks,
        }
        if repeat is not None:
            measurement["repeat"] = repeat
        if mpi_library:
            measurement["mpi_library"] = mpi_library
        measurement["reason"] = reason
        measurements.append(measurement)
    return measurements
