"""Reads a run's results.jsonl into typed records (on the frames of commatlas.io.records.lines).

The engine writes one JSON object per line (shape defined in engine/core/records.cpp); the
launcher adds a `meta` line first and an `end` line last. A run killed mid-write leaves a
partial last line: it is dropped and noted, never fatal. Anything else that does not parse, or
a file that is not a commatlas results file at all, raises ResultsError naming file and line.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from commatlas.errors import UsageError
from commatlas.io.points import ParamsKey, SeriesKey, params_key, series_key
from commatlas.io.records import RESULTS_FILE, current_params, lines, read_results_bytes
from commatlas.io.residency import measure_residency

RECORD_TYPES = ("meta", "result", "skip", "error", "stability", "end")
# Per-sample arrays are most of every line; parsing them lazily (only for the few series whose
# distributions are drawn) keeps a 100,000-record report fast.
_SAMPLES_KEY = b'"samples_s"'


class ResultsError(UsageError):
    """A results file that cannot be read; the message is one line naming file and line.
    A bad file is bad input: the CLI prints the line and exits with status 2."""


@dataclass(frozen=True)
class Precision:
    """The harness's precision target for a point and whether it was met (timing.precision)."""

    target: float | None
    reached: float | None
    stopped: str  # why sampling stopped: the target met, the time budget, the sample cap, ...
    met: bool  # reached ≤ target; False when either is unknown


@dataclass(frozen=True)
class Timing:
    method: str
    samples: int
    ops_per_sample: int
    warmup_samples: int
    max_over_ranks: bool
    precision: Precision | None = None


@dataclass(frozen=True)
class Stats:
    min_s: float
    p5_s: float
    median_s: float
    mean_s: float
    p95_s: float
    p99_s: float
    max_s: float
    stddev_s: float
    cv: float


@dataclass(frozen=True)
class Peak:
    gbps: float  # nan when unknown; `unknown` says why
    source: str
    fraction: float
    unknown: str = ""


@dataclass(frozen=True)
class Endpoint:
    """One end of a movement as the engine declared it (engine/core/movement.h)."""

    memory: str  # where the bytes are while timed: "host", "gpu" or "none"
    gpu: int | None
    numa: int | None
    rank: int | None
    node: str
    processor: bool  # the CPU or GPU doing the loads of a read/write/load-latency
    allocator: str  # a choice of the user, not a place
    first_touch: str


@dataclass(frozen=True)
class Movement:
    """What moved from where to where, how: the record's `movement` object. Records written
    before the engine declared it have none (Point.movement is None): nothing is guessed."""

    operation: str
    direction: str
    mechanism: str
    source: Endpoint | None  # "from" in the record; None on benchmark-wide skips
    target: Endpoint | None  # "to"
    choices: tuple[tuple[str, str], ...]
    same_node: bool | None
    cache_resident: bool
    reference_of: str
    # The processor moving the bytes where the engine declares it apart from the places (a copy
    # kernel's GPU); None where the mover is an endpoint or a choice, or the record predates it.
    by: Endpoint | None = None
    # Collectives and patterns: members of the communicator; None on point-to-point movements and
    # in records written before the engine declared it (answers.participants_of falls back).
    participants: int | None = None
    # How cache_resident was decided: "capacity" (the engine: the working set fits the nominal
    # cache) or "measured" (a latency sweep's own levels, residency.py), with why.
    residency: str = "capacity"
    residency_why: str = ""


@dataclass(frozen=True)
class Collective:
    operation: str
    algbw_gbps: float
    bus_factor: float
    busbw_gbps: float
    goodput_gbps: float


@dataclass(slots=True)
class Point:
    """Identity shared by result, skip and error records: which benchmark, variant and size."""

    benchmark: str
    category: str
    interface: str
    suite: str
    metric: str
    params: dict[str, Any]
    bytes: int | None
    ranks: int
    time: float
    line: int
    repeat: int | None = field(default=None, kw_only=True)  # commatlas run --repeat: which repetition
    movement: Movement | None = field(default=None, kw_only=True)
    point: str = field(default="", kw_only=True)  # the engine's stable point key (resume, answers)
    # The MPI library of an MPI record ("Open MPI 4.1.4"), "" otherwise: one run may hold the same
    # point under several (commatlas run --mpi a,b), and then they are different points.
    mpi_library: str = field(default="", kw_only=True)

    @property
    def params_key(self) -> ParamsKey:
        return params_key(self.params, self.mpi_library)


@dataclass(slots=True)
class Result(Point):
    bytes_per_op: float
    timing: Timing
    stats: Stats
    bandwidth_gbps: float
    latency_us: float
    verified_ok: bool
    bytes_checked: int
    latency_includes: str | None = None
    # How the data check was earned ("bytes", "sum", "chain", "unchanged", "none"); None in records
    # written before engines said so.
    verified_method: str | None = None
    peak: Peak | None = None
    collective: Collective | None = None
    # Multi-rank points: the CPUs each rank could run on at the start (placement.cpus), rank order.
    rank_cpus: tuple[str, ...] | None = None
    # Whether a second batch, after the rest of the variant's sweep, agreed (timing.stability):
    # "repeatable", "unstable" or "unchecked"; None in records written before engines checked.
    stability: str | None = None
    # The medians (s per op) of the point's own measurement and of its confirmation batch.
    stability_modes: tuple[float, ...] = ()
    # What the host did in each of those passes (timing.host_activity, then the stability
    # record's): the records' dicts, None where a pass has none (commatlas.analysis.host_activity).
    pass_activity: tuple[dict[str, Any] | None, ...] = ()
    # A clock that enqueues inside its window (bare loops): the host's seconds to enqueue one
    # operation (timing.host_enqueue_s); None for every other clock.
    host_enqueue_s: float | None = None
    # MPI over device buffers: per rank in rank order, its 8 B synchronous copy time in
    # microseconds right before and right after the timed batches (timing.copy_level_us; None
    # where a rank has none); empty for every other point.
    copy_level_us: tuple[tuple[float | None, ...], ...] = ()
    _samples_at: tuple[_Source, int, int] | None = field(default=None, repr=False)
    _samples: np.ndarray | None = field(default=None, repr=False)

    @property
    def samples(self) -> np.ndarray:
        """Per-operation seconds of the record's reservoir (parsed on first use)."""
        if self._samples is None:
            source, start, stop = self._samples_at or (_Source(b""), 0, 0)
            try:
                self._samples = _parse_samples(source.data[start:stop])
            except ValueError:
                raise ResultsError(f"line {self.line}: samples_s is not a list of numbers") from None
            self._samples_at = None
        return self._samples


@dataclass(slots=True)
class Skip(Point):
    reason: str


@dataclass(slots=True)
class Failure(Point):
    message: str


@dataclass(frozen=True)
class End:
    end_time: float | None
    status: str
    results: int | None
    skipped: int | None
    errors: int | None
    wall_s: float | None


@dataclass(slots=True)
class Run:
    path: Path  # the results.jsonl file
    meta: dict[str, Any] | None
    results: list[Result]
    skips: list[Skip]
    failures: list[Failure]
    end: End | None
    notes: list[str]  # what is unusual about the file itself (truncation, missing meta/end)
    # Stability records by point: the verdicts of the confirmation pass, written after the results.
    stability: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def status(self) -> str:
        return self.end.status if self.end else "incomplete (no end record: the run died or is still running)"

    @property
    def undeclared(self) -> int:
        """Results without a movement object: written before the engine declared movements."""
        return sum(1 for r in self.results if r.movement is None)

    @property
    def complete(self) -> bool:
        return self.end is not None and self.end.status == "complete"


def results_path(run: str | Path) -> Path:
    """The run's results file: RUN/results.jsonl, else RUN/results.jsonl.gz (a committed run kept
    gzipped), or RUN itself when it names a file."""
    path = Path(run)
    if path.is_dir():
        packed = path / (RESULTS_FILE + ".gz")
        path = packed if not (path / RESULTS_FILE).is_file() and packed.is_file() else path / RESULTS_FILE
    if not path.is_file():
        raise ResultsError(f"{path}: no such results file")
    return path


def load_run(run: str | Path) -> Run:
    """Reads a run directory (or its results.jsonl)."""
    path = results_path(run)
    try:
        data = read_results_bytes(path)
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: cannot read: {e}") from None
    notes: list[str] = []
    bad: list[tuple[int, str]] = []  # lines that are not JSON: (number, why)
    run = Run(path, None, [], [], [], None, notes)
    source = _Source(data)
    for number, start, end, is_last in lines(data):
        try:
            record = _decode(source, start, end)
        except ValueError as e:
            if is_last:
                notes.append(f"line {number} is truncated (the writer stopped mid-record); read the {number - 1} lines before it")
                break
            # One damaged line costs its record, not the run: the rest is read, and said.
            bad.append((number, str(e)))
            continue
        _add(run, record, number, path)
    if not run.meta and not run.results and not run.skips and not run.failures:
        first = f" (line {bad[0][0]} is not valid JSON: {bad[0][1]})" if bad else ""
        raise ResultsError(f"{path}: holds no commatlas records{first}")
    if bad:
        message = bad_lines_text(path, [n for n, _ in bad])
        notes.append(message)
        print(f"commatlas: warning: {message}", file=sys.stderr)
    if run.meta is None:
        notes.append("no meta record (engine output without the launcher): machine, versions and environment are unknown")
    if run.end is None:
        notes.append("no end record: the run died or is still running; points after the last record are missing")
    attach_stability(run)
    measure_residency(run)
    return run


def bad_lines_text(path: Path, numbers: list[int]) -> str:
    """'results.jsonl: 2 lines are not valid JSON (lines 17, 40); read the records around them'."""
    shown = ", ".join(str(n) for n in numbers[:5]) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")
    many = len(numbers) > 1
    return (f"{path}: {len(numbers)} line{'s are' if many else ' is'} not valid JSON "
            f"(line{'s' if many else ''} {shown}); read the records around {'them' if many else 'it'}, "
            f"their points are missing (`commatlas run --resume` measures them)")


def run_from_records(records: Iterable[dict[str, Any]], path: str | Path = RESULTS_FILE) -> Run:
    """A Run from records already parsed (the end of `commatlas run` holds them in memory)."""
    path = Path(path)
    run = Run(path, None, [], [], [], None, [])
    for number, record in enumerate(records, 1):
        _add(run, record, number, path)
    attach_stability(run)
    measure_residency(run)
    return run


def attach_stability(run: Run) -> None:
    """Each result gets the verdict of its point's stability record (the engine writes those after
    the variant's sweep); a result without one keeps what its own record said (older engines put
    it in timing.stability) or stays unknown (a run stopped before the confirmation pass)."""
    for r in run.results:
        st = run.stability.get(r.point)
        if st and st.get("verdict"):
            r.stability = str(st["verdict"])
            r.stability_modes = tuple(_num(x) for x in st.get("passes_median_s") or ())
            first = r.pass_activity[0] if r.pass_activity else None
            r.pass_activity = (first, st.get("host_activity")) if first or st.get("host_activity") else ()


class _Source:
    """The file's bytes, kept for the sample arrays that are parsed later (by offsets)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def _decode(source: _Source, pos: int, end: int) -> dict[str, Any]:
    """One line as a dict; its samples_s array (numbers only) is cut out before json parses the
    rest and left as (source, start, stop) for Result.samples to parse on first use."""
    data = source.data
    start = data.find(_SAMPLES_KEY, pos, end)
    if start >= 0:
        open_at = data.find(b"[", start, end)
        close_at = data.find(b"]", open_at, end) if open_at >= 0 else -1
        if close_at > open_at and data[start + len(_SAMPLES_KEY):open_at].strip() == b":":
            record = json.loads((data[pos:open_at] + b"null" + data[close_at + 1:end]).decode("utf-8"))
            if isinstance(record, dict):
                record["samples_s"] = (source, open_at + 1, close_at)
            return record
    return json.loads(data[pos:end].decode("utf-8"))


def _parse_samples(text: bytes) -> np.ndarray:
    if not text.strip():
        return np.empty(0)
    try:
        return np.array(text.split(b","), dtype=float)
    except ValueError:
        # null stands for a non-finite sample (the engine's JSON writer): keep it as NaN.
        return np.array([np.nan if v is None else v for v in json.loads(b"[" + text + b"]")], dtype=float)


def _add(run: Run, record: Any, number: int, path: Path) -> None:
    where = f"{path}:{number}"
    if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
        kind = record.get("type") if isinstance(record, dict) else type(record).__name__
        raise ResultsError(f"{where}: not a commatlas record (type {kind!r}; expected one of {', '.join(RECORD_TYPES)})")
    kind = record["type"]
    try:
        if kind == "meta":
            if run.meta is not None or run.results or run.skips or run.failures:
                raise ResultsError(f"{where}: a meta record must be the first line, and only one")
            run.meta = record
        elif kind == "end":
            run.end = End(record.get("end_time"), str(record.get("status", "unknown")), record.get("results"),
                          record.get("skipped"), record.get("errors"), record.get("wall_s"))
        elif kind == "result":
            run.results.append(_result(record, number))
        elif kind == "stability":
            run.stability[str(record["point"])] = dict(record["stability"])
        elif kind == "skip":
            run.skips.append(Skip(**_identity(record, number), reason=str(record["reason"])))
        else:
            run.failures.append(Failure(**_identity(record, number), message=str(record["message"])))
    except (KeyError, TypeError, ValueError, OverflowError) as e:  # OverflowError: int() of 1e999
        raise ResultsError(f"{where}: malformed {kind} record ({type(e).__name__}: {e})") from None


def _identity(r: dict[str, Any], number: int) -> dict[str, Any]:
    params = r.get("params") or {}
    if not isinstance(params, dict):
        raise TypeError("params is not an object")
    return dict(benchmark=str(r["benchmark"]), category=str(r["category"]), interface=str(r["interface"]),
                suite=str(r.get("suite", "")), metric=str(r["metric"]), params=current_params(str(r["benchmark"]), params),
                bytes=None if r.get("bytes") is None else int(r["bytes"]), ranks=int(r.get("ranks", 1)),
                time=float(r.get("time") or 0.0), line=number,
                repeat=None if r.get("repeat") is None else int(r["repeat"]),
                movement=_movement(r.get("movement")), point=str(r.get("point") or ""),
                mpi_library=_library_label(r.get("mpi_library")))


def _library_label(library: Any) -> str:
    if not isinstance(library, dict):
        return ""
    return " ".join(str(library[k]) for k in ("name", "version") if library.get(k))


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _endpoint(e: Any) -> Endpoint | None:
    if e is None:
        return None
    if not isinstance(e, dict):
        raise TypeError("a movement endpoint is not an object")
    return Endpoint(str(e["memory"]), _opt_int(e.get("gpu")), _opt_int(e.get("numa")), _opt_int(e.get("rank")),
                    str(e.get("node") or ""), bool(e.get("processor", False)), str(e.get("allocator") or ""),
                    str(e.get("first_touch") or ""))


_MOVEMENTS: dict[str, Movement] = {}  # a run declares few distinct movements: share them


def _movement(m: Any) -> Movement | None:
    if m is None:
        return None
    if not isinstance(m, dict):
        raise TypeError("movement is not an object")
    key = json.dumps(m, sort_keys=True)
    found = _MOVEMENTS.get(key)
    if found is None:
        choices = m.get("choices") or {}
        if not isinstance(choices, dict):
            raise TypeError("movement.choices is not an object")
        same = m.get("same_node")
        found = Movement(str(m["operation"]), str(m["direction"]), str(m["mechanism"]), _endpoint(m.get("from")),
                         _endpoint(m.get("to")), tuple(sorted((str(k), str(v)) for k, v in choices.items())),
                         None if same is None else bool(same), bool(m.get("cache_resident", False)),
                         str(m.get("reference_of") or ""), _endpoint(m.get("by")), _opt_int(m.get("participants")))
        if len(_MOVEMENTS) < 100_000:
            _MOVEMENTS[key] = found
    return found


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


_STAT_KEYS = ("min_s", "p5_s", "median_s", "mean_s", "p95_s", "p99_s", "max_s", "stddev_s", "cv")
_TIMINGS: dict[tuple, Timing] = {}  # a run holds a handful of distinct timings: share them


def _precision(p: Any) -> Precision | None:
    if not isinstance(p, dict):
        return None
    target, reached = p.get("target"), p.get("reached")
    target = None if target is None else float(target)
    reached = None if reached is None else float(reached)
    return Precision(target, reached, str(p.get("stopped") or ""),
                     target is not None and reached is not None and reached <= target)


def _timing(t: dict[str, Any]) -> Timing:
    key = (t["method"], t["samples"], t["ops_per_sample"], t.get("warmup_samples", 0), t.get("max_over_ranks", False),
           json.dumps(t.get("precision"), sort_keys=True))
    timing = _TIMINGS.get(key)
    if timing is None:
        timing = Timing(str(key[0]), int(key[1]), int(key[2]), int(key[3]), bool(key[4]), _precision(t.get("precision")))
        if len(_TIMINGS) < 10_000:
            _TIMINGS[key] = timing
    return timing


def _result(r: dict[str, Any], number: int) -> Result:
    t, s, v = r["timing"], r["stats"], r["verified"]
    peak = r.get("peak")
    coll = r.get("collective")
    samples = r.get("samples_s")
    return Result(
        **_identity(r, number),
        bytes_per_op=float(r["bytes_per_op"]),
        timing=_timing(t),
        stats=Stats(*[_num(s[k]) for k in _STAT_KEYS]),
        bandwidth_gbps=_num(r["bandwidth_gbps"]),
        latency_us=_num(r["latency_us"]),
        verified_ok=bool(v["ok"]),
        bytes_checked=int(v.get("bytes_checked", 0)),
        latency_includes=r.get("latency_includes"),
        verified_method=v.get("method"),
        peak=Peak(_num(peak.get("gbps")), str(peak.get("source") or ""), _num(peak.get("fraction")),
                  str(peak.get("unknown") or "")) if peak else None,
        collective=Collective(str(coll["operation"]), _num(coll["algbw_gbps"]), _num(coll["bus_factor"]),
                              _num(coll["busbw_gbps"]), _num(coll.get("goodput_gbps"))) if coll else None,
        rank_cpus=tuple(map(str, cpus)) if (cpus := (r.get("placement") or {}).get("cpus")) else None,
        stability=str(st["verdict"]) if isinstance(st := t.get("stability"), dict) and st.get("verdict") else None,
        stability_modes=tuple(_num(x) for x in st.get("passes_median_s") or ()) if isinstance(st, dict) else (),
        pass_activity=(t["host_activity"],) if t.get("host_activity") else (),
        host_enqueue_s=None if t.get("host_enqueue_s") is None else float(t["host_enqueue_s"]),
        copy_level_us=tuple(tuple(None if x is None else float(x) for x in rank) for rank in t.get("copy_level_us") or ()),
        _samples_at=samples if isinstance(samples, tuple) else None,
        _samples=np.array([np.nan if x is None else x for x in samples], dtype=float) if isinstance(samples, list) else None,
    )


@dataclass(slots=True)
class Series:
    """One benchmark variant over sizes: the unit every plot line and comparison is made of."""

    key: SeriesKey
    points: list[Result]  # sorted by bytes, one per size

    @property
    def first(self) -> Result:
        return self.points[0]

    @property
    def benchmark(self) -> str:
        return self.key[0]

    @property
    def params(self) -> dict[str, Any]:
        return self.first.params

    @property
    def ranks(self) -> int:
        return self.key[2]

    @property
    def sizes(self) -> np.ndarray:
        return np.array([p.bytes or 0 for p in self.points], dtype=float)

    def values(self, metric: str | None = None) -> np.ndarray:
        """Bandwidth (GB/s) or latency (µs) per size, by the series' own metric unless told."""
        m = metric or self.first.metric
        return np.array([p.bandwidth_gbps if m == "bandwidth" else p.latency_us for p in self.points])

    def label(self) -> str:
        variant = ", ".join(f"{k}={v}" for k, v in self.key[1])
        ranks = f", {self.ranks} ranks" if self.ranks > 1 else ""
        return f"{self.benchmark}" + (f" ({variant}{ranks})" if variant or ranks else "")


def group_series(results: Iterable[Result]) -> tuple[list[Series], list[str]]:
    """Groups results into series; a size measured twice keeps the later record (noted unless it
    is another repetition of --repeat, whose spread commatlas.analysis.repeats reports)."""
    table: dict[SeriesKey, dict[int, Result]] = {}
    notes: list[str] = []
    for r in results:
        key = series_key(r)
        by_size = table.setdefault(key, {})
        size = r.bytes or 0
        if size in by_size and by_size[size].repeat == r.repeat:  # another repetition is expected
            notes.append(f"line {r.line}: {r.benchmark} at {size} B measured again; the later record is used")
        by_size[size] = r
    series = [Series(k, [v[s] for s in sorted(v)]) for k, v in table.items()]
    series.sort(key=lambda s: (s.first.category, s.benchmark, s.key[1], s.ranks))
    return series, notes
