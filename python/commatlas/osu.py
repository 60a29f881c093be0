"""The OSU-method reference: `commatlas-osu-ref` (engine/tools/osu_reference.c) runs osu_latency,
osu_bw and osu_bibw as the OSU micro-benchmarks 7.x do, in a process of its own, under the same
launcher as the engine's MPI phase. Its JSON lines become result records here, and
`comparison_rows` sets the engine's mpi.pingpong / mpi.bandwidth / mpi.bibw beside them.

It is the one deliberate exception to "one timing harness": it shares nothing with the engine but
the launcher, so a cost of the engine process (threads, libraries, MPI set-up) shows as a
difference instead of hiding in a loop that pays it too."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

REFERENCE_PROGRAM = "commatlas-osu-ref"
# OSU test -> (the record's benchmark key, the engine benchmark it checks, the --tests name).
TESTS: dict[str, tuple[str, str, str]] = {
    "osu_latency": ("reference.osu_latency", "mpi.pingpong", "latency"),
    "osu_bw": ("reference.osu_bw", "mpi.bandwidth", "bw"),
    "osu_bibw": ("reference.osu_bibw", "mpi.bibw", "bibw"),
}
CHECKED = {engine_key: test for test, (_, engine_key, _) in TESTS.items()}
# OSU's largest default message (MAX_MESSAGE_SIZE): larger engine points are not compared.
LARGEST_BYTES = 4 << 20
# The issue-17 rule: engine and reference agree when their medians differ by at most 3% or by
# the reference's own round-to-round spread, whichever is larger.
AGREE_FRACTION = 0.03


_SHAPE = {"osu_latency": ("ping_pong", "half_round_trip"), "osu_bw": ("send_recv", "uni"),
          "osu_bibw": ("send_recv", "bi")}


def _endpoint(rank: int) -> dict[str, Any]:
    return {"memory": "host", "gpu": None, "numa": None, "rank": rank, "node": None, "processor": False,
            "allocator": "pageable", "first_touch": "cpu"}


def reference_movement(test: str, engine_movement: dict[str, Any] | None = None) -> dict[str, Any]:
    """The movement of the engine benchmark the test checks (taken from its record where there is
    one, so both land on the same movement key), marked `reference_of`."""
    operation, direction = _SHAPE[test]
    movement = dict(engine_movement) if engine_movement else {
        "operation": operation, "direction": direction, "mechanism": "mpi_host",
        "from": _endpoint(0), "to": _endpoint(1), "choices": {}, "same_node": True}
    movement.pop("cache_resident", None)
    movement["reference_of"] = TESTS[test][1]
    return movement


def engine_movements(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The movement each checked engine benchmark's results declare."""
    return {r["benchmark"]: r["movement"] for r in records
            if r.get("type") == "result" and r.get("benchmark") in CHECKED and r.get("movement")}


def reference_path(engine_path: Path) -> Path | None:
    """The reference is installed next to the engine (CMake puts both in one folder)."""
    path = engine_path.parent / REFERENCE_PROGRAM
    return path if path.is_file() else None


def tests_and_sizes(records: Iterable[dict[str, Any]]) -> tuple[list[str], list[int]]:
    """The OSU tests that check benchmarks of these records, and the sizes those measured."""
    tests: set[str] = set()
    sizes: set[int] = set()
    for r in records:
        test = CHECKED.get(r.get("benchmark", ""))
        if r.get("type") == "result" and test and r.get("bytes") and r["bytes"] <= LARGEST_BYTES:
            tests.add(TESTS[test][2])
            sizes.add(int(r["bytes"]))
    order = [t for _, _, t in TESTS.values()]
    return sorted(tests, key=order.index), sorted(sizes)


def reference_arguments(tests: list[str], sizes: list[int]) -> list[str]:
    return ["--tests", ",".join(tests), "--sizes", ",".join(str(s) for s in sizes)]


def _point_key(benchmark: str, params: dict[str, Any], size: int, ranks: int, repeat: int | None) -> str:
    # The engine's point_key (engine/core/records.cpp): benchmark|k=json,...|bytes|ranks[|rN].
    text = ",".join(f"{k}={json.dumps(v)}" for k, v in params.items())
    return f"{benchmark}|{text}|{size}|{ranks}" + (f"|r{repeat}" if repeat is not None else "")


def _method(test: str, iterations: int, skip: int, window: int | None) -> str:
    what = ("MPI_Send + MPI_Recv round trips, total / (2 x iterations)" if test == "osu_latency"
            else f"windows of {window} MPI_Isend/MPI_Irecv + MPI_Waitall"
            + (", a 4-byte ack" if test == "osu_bw" else " each way") + ", total / iterations")
    return (f"{test} (OSU micro-benchmarks 7.x method) in its own process ({REFERENCE_PROGRAM}): "
            f"MPI_Wtime on rank 0 around {iterations} {what}, after {skip} skipped")


def reference_total(tests: list[str], sizes: list[int]) -> int:
    """Lines the reference will print: one per test and size, as it measures them."""
    return len(tests) * len(sizes)


def _output(line: str) -> dict[str, Any] | None:
    """One of the reference's JSON lines, or None (launcher noise)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        out = json.loads(line)
    except json.JSONDecodeError:
        return None
    return out if isinstance(out, dict) and out.get("test") in TESTS else None


def progress_point(line: str) -> dict[str, Any] | None:
    """A reference line as a progress point, in the engine's event shape ("osu_bw 1 MiB 10.6 GB/s")."""
    out = _output(line)
    if out is None:
        return None
    event: dict[str, Any] = {"event": "point", "benchmark": out["test"], "bytes": out.get("bytes"),
                             "status": "ok" if out.get("verified") else "data check failed"}
    if out.get("latency_us") is not None:
        event["median_s"] = float(out["latency_us"]) / 1e6
    if out.get("mb_per_s") is not None:
        event["gbps"] = float(out["mb_per_s"]) / 1e3
    return event


# The figure each test's progress point is about (progress.describe_point's `metric`).
PROGRESS_METRICS = {test: "latency" if test == "osu_latency" else "bandwidth" for test in TESTS}


def reference_records(lines: Iterable[str], ranks: int, repeat: int | None = None,
                      env: tuple[tuple[str, str], ...] = (), now: float | None = None,
                      movements: dict[str, dict[str, Any]] | None = None,
                      mpi_library: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Result (or error) records, in the engine's format, from the reference's JSON lines;
    lines that are not its output (launcher noise) are ignored. `mpi_library`: the engine records'
    library (the reference is built against the same one), so each library's figures pair with
    its own reference."""
    records = []
    stamp = time.time() if now is None else now
    for line in lines:
        out = _output(line)
        if out is None:
            continue
        test = out["test"]
        benchmark, checks, _ = TESTS[test]
        size = int(out["bytes"])
        params: dict[str, Any] = {"method": "osu", "reference_of": checks}
        params.update({f"env.{name}": value for name, value in env})
        identity: dict[str, Any] = {
            "point": _point_key(benchmark, params, size, ranks, repeat), "benchmark": benchmark,
            "category": "reference", "interface": "mpi", "suite": "mpi",
            "metric": "latency" if test == "osu_latency" else "bandwidth",
            "params": params, "movement": reference_movement(test, (movements or {}).get(checks)),
            "bytes": size, "ranks": ranks,
        }
        if repeat is not None:
            identity["repeat"] = repeat
        if mpi_library:
            identity["mpi_library"] = mpi_library
            identity["point"] += f"|{mpi_library['id']}-{mpi_library['version']}"
        identity["time"] = round(stamp, 3)
        if not out.get("verified"):
            records.append({"type": "error", **identity,
                            "message": f"data check failed: {out.get('detail', 'the reference saw wrong bytes')}"})
            continue
        iterations, seconds = int(out["iterations"]), float(out["seconds"])
        window = out.get("window")
        if test == "osu_latency":
            per_op, bytes_per_op = seconds / (2 * iterations), float(size)
        else:
            per_op = seconds / iterations
            bytes_per_op = float(size * window * (2 if test == "osu_bibw" else 1))
        stats = {k: per_op for k in ("min_s", "p5_s", "median_s", "mean_s", "p95_s", "p99_s", "max_s")}
        stats.update(stddev_s=0.0, cv=0.0)
        records.append({
            "type": "result", **identity, "bytes_per_op": bytes_per_op,
            "timing": {"method": _method(test, iterations, int(out["skip"]), window), "samples": 1,
                       "ops_per_sample": iterations, "warmup_samples": int(out["skip"]), "max_over_ranks": False},
            "stats": stats, "samples_s": [per_op],
            "bandwidth_gbps": bytes_per_op / per_op / 1e9 if per_op > 0 else None,
            "latency_us": per_op * 1e6,
            "latency_includes": ("half a round trip, bare osu_latency loop" if test == "osu_latency"
                                 else f"one window (osu_{test[4:]}), bare loop"),
            # OSU fills r_buf once, before its warm-up: the check cannot say the timed messages
            # arrived, only that messages did (docs/results-format.md, Verification).
            "verified": {"ok": True, "bytes_checked": int(out.get("bytes_checked", 0)), "method": "bytes_once"},
        })
    return records


@dataclass(frozen=True)
class ComparisonRow:
    """One size of one engine benchmark beside its OSU-method reference (medians over passes)."""
    benchmark: str
    bytes: int
    metric: str             # latency (us) or bandwidth (MB/s, OSU's unit)
    engine: float
    reference: float
    rounds: int             # passes that measured both
    reference_spread: float  # (max - min) / median of the reference over the passes
    ratio: float            # engine / reference
    agree: bool
    library: str = ""       # the MPI library both ran on ("Open MPI 4.1.4"); "" in older runs

    @property
    def engine_text(self) -> str:
        return format_figure(self.engine, self.metric)

    @property
    def reference_text(self) -> str:
        return format_figure(self.reference, self.metric)


def format_figure(value: float, metric: str) -> str:
    """In OSU's units, without exponents: "0.4535 us", "252.1 MB/s", "10,350 MB/s"."""
    unit = "us" if metric == "latency" else "MB/s"
    return f"{value:,.0f} {unit}" if value >= 1000 else f"{value:.4g} {unit}"


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
    for r in records:
        if r.get("type") != "result" or r.get("bytes") is None:
            continue
        value = _figure(r)
        if value is None:
            continue
        key = r["benchmark"]
        # One run may hold several libraries (commatlas run --mpi a,b): each pairs with its own.
        library = library_label(r)
        if key in CHECKED:
            engine.setdefault((key, library, r["bytes"]), {})[_pass_of(r)] = value
        elif key in (b for b, _, _ in TESTS.values()) and r.get("params", {}).get("reference_of") in CHECKED:
            reference.setdefault((r["params"]["reference_of"], library, r["bytes"]), {})[_pass_of(r)] = value
    rows = []
    for (benchmark, library, size), by_pass in sorted(engine.items()):
        ref = reference.get((benchmark, library, size), {})
        passes = sorted(set(by_pass) & set(ref), key=repr)
        if not passes:
            continue
        e = statistics.median(by_pass[p] for p in passes)
        refs = [ref[p] for p in passes]
        o = statistics.median(refs)
        spread = (max(refs) - min(refs)) / o if o > 0 else 0.0
        agree = abs(e - o) / o <= max(AGREE_FRACTION, spread) if o > 0 else False
        metric = "latency" if CHECKED[benchmark] == "osu_latency" else "bandwidth"
        rows.append(ComparisonRow(benchmark, size, metric, e, o, len(passes), spread, e / o if o else 0.0, agree,
                                  library))
    return rows


def reference_skips(reason: str, ranks: int, repeat: int | None = None,
                    env: tuple[tuple[str, str], ...] = (), tests: Iterable[str] = (),
                    mpi_library: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Benchmark-wide skip records for the OSU tests that could not run (e.g. not two ranks)."""
    records = []
    for test, (benchmark, checks, name) in TESTS.items():
        if name not in tests:
            continue
        params: dict[str, Any] = {"method": "osu", "reference_of": checks}
        params.update({f"env.{k}": v for k, v in env})
        record: dict[str, Any] = {
            "type": "skip", "point": _point_key(benchmark, params, 0, ranks, repeat).replace("|0|", "|-|"),
            "benchmark": benchmark, "category": "reference", "interface": "mpi", "suite": "mpi",
            "metric": "latency" if test == "osu_latency" else "bandwidth", "params": params,
            "movement": reference_movement(test), "bytes": None, "ranks": ranks,
        }
        if repeat is not None:
            record["repeat"] = repeat
        if mpi_library:
            record["mpi_library"] = mpi_library
            record["point"] += f"|{mpi_library['id']}-{mpi_library['version']}"
        record["time"] = round(time.time(), 3)
        record["reason"] = reason
        records.append(record)
    return records
