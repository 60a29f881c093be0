"""The one reader of results.jsonl, and the records Python adds around the engine's: `meta` (first
line) and `end` (last line). The engine shapes result/skip/error records;
schema/results.schema.json describes all five.

Reading: `lines` frames the file (only the last line may be cut short, by a writer killed
mid-record), `read_records` gives the records as dicts to raw consumers (resume, the end of a run,
the OSU rows, multi-node soaks), and commatlas.io.results builds its typed Run on the same frames.
Both give params in today's names (`current_params`: older records' spellings are mapped once,
here)."""

from __future__ import annotations

import datetime as dt
import fnmatch
import gzip
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

from commatlas import __version__

SCHEMA_VERSION = 1
RESULTS_FILE = "results.jsonl"
ENGINE_LOG = "engine.log"
# What a record's params `env.NAME` hold for a variable a pass left unset (--sweep-env, --tune):
# the baseline of a tuning sweep, written the same way by the engine and by Python.
UNSET = "(unset)"
# Variables that change what communication libraries do: results without them are not comparable.
ENVIRONMENT_PREFIXES = ("NCCL_", "UCX_", "OMPI_", "MPICH_", "CUDA_", "HSA_", "I_MPI_", "FI_", "SLURM_")

# Params of older records in today's words, so that an old run and a new one match point by point
# (compare, repeats, the harness check): the engine names a buffer's allocator as the record's
# endpoint does (`allocator`; `host_allocator` and `device_allocator` where a copy's two ends are
# chosen apart), and the direct-access kernels' `location` became the allocator, `memory_gpu`
# (already there) and `managed_hint`. Each row: the benchmarks it applies to (fnmatch patterns),
# the old name, the old value it applies to (None: any), the new name (None: the param goes, the
# others say it) and the new value (None: the same). The first row that matches a param decides.
_DIRECT_ACCESS = ("gpu.stream_*", "gpu.pointer_chase", "host.pointer_chase_gpu_memory")
PARAM_ALIASES: tuple[tuple[tuple[str, ...], str, str | None, str | None, str | None], ...] = (
    (("gpu.prefetch",), "host_alloc", None, "allocator", None),
    (("*",), "host_alloc", None, "host_allocator", None),
    (("*",), "device_alloc", None, "device_allocator", None),
    (_DIRECT_ACCESS, "alloc", None, "allocator", None),
    (_DIRECT_ACCESS, "location", "managed", "managed_hint", "none"),
    (_DIRECT_ACCESS, "location", "managed_prefetched", "managed_hint", "prefetched"),
    (_DIRECT_ACCESS, "location", "managed_host_preferred", "managed_hint", "preferred_location_host"),
    (_DIRECT_ACCESS, "location", None, None, None),  # local, peer, pinned, pageable
)
_OLD_NAMES = frozenset(row[1] for row in PARAM_ALIASES)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso_utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def relevant_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    source = os.environ if environ is None else environ
    return {k: v for k, v in sorted(source.items()) if k.startswith(ENVIRONMENT_PREFIXES)}


def meta_record(
    run_id: str,
    start: dt.datetime,
    options: dict[str, Any],
    engine_info: dict[str, Any],
    topology: dict[str, Any] | None,
    launcher: dict[str, Any],
) -> dict[str, Any]:
    return {
        "type": "meta",
        "schema_version": SCHEMA_VERSION,
        "commatlas_version": __version__,
        "run_id": run_id,
        "start_time": iso_utc(start),
        "command_line": list(sys.argv),
        "cwd": os.getcwd(),
        "options": options,
        "engine": engine_info,
        "topology": topology,
        "environment": relevant_environment(),
        "launcher": launcher,
    }


def count_by_type(records: Iterable[dict[str, Any]]) -> Counter[str]:
    return Counter(r.get("type", "?") for r in records)


COST_PARTS = ("wall_s", "prepare_s", "calibration_s", "warmup_s", "timed_s", "check_s", "confirm_s")


def benchmark_costs(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per benchmark, the points measured and the seconds their `cost` objects add up to, with
    the share of the wall time spent in timed and warm-up samples: where a run's minutes go."""
    costs: dict[str, dict[str, Any]] = {}
    for r in records:
        cost = r.get("cost")
        if r.get("type") == "stability" and isinstance(r.get("confirm_s"), (int, float)):
            # The confirmation pass's time, in its own record after the point's result.
            entry = costs.setdefault(str(r.get("benchmark")), {"points": 0, **{part: 0.0 for part in COST_PARTS}})
            entry["confirm_s"] += float(r["confirm_s"])
            continue
        if r.get("type") != "result" or not isinstance(cost, dict):
            continue
        entry = costs.setdefault(str(r.get("benchmark")), {"points": 0, **{part: 0.0 for part in COST_PARTS}})
        entry["points"] += 1
        for part in COST_PARTS:
            value = cost.get(part)
            if isinstance(value, (int, float)):
                entry[part] += float(value)
    for entry in costs.values():
        wall = entry["wall_s"]
        entry["timed_share"] = round(entry["timed_s"] / wall, 4) if wall > 0 else None
        entry["warmup_share"] = round(entry["warmup_s"] / wall, 4) if wall > 0 else None
        for part in COST_PARTS:
            entry[part] = round(entry[part], 3)
    return dict(sorted(costs.items()))


def end_record(status: str, records: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    counts = count_by_type(records)
    stops = Counter(str(r.get("timing", {}).get("stop_reason")) for r in records
                    if r.get("type") == "result" and r.get("timing", {}).get("stop_reason"))
    stability = Counter(str(r["stability"].get("verdict")) for r in records
                        if r.get("type") == "stability" and isinstance(r.get("stability"), dict))
    return {
        "type": "end",
        "end_time": iso_utc(utc_now()),
        "status": status,
        "results": counts["result"],
        "skipped": counts["skip"],
        "errors": counts["error"],
        # The whole command: from the process's start to this record (the report comes after).
        "wall_s": round(wall_s, 3),
        "stop_reasons": dict(sorted(stops.items())),
        "stability": dict(sorted(stability.items())),
        "benchmarks": benchmark_costs(records),
    }


def drop_partial_tail(path: Path) -> None:
    """Cuts a record the engine was killed in the middle of writing: half a record is not a
    record, and the end record must start on its own line."""
    with path.open("rb+") as f:
        data = f.read()
        keep = data.rfind(b"\n") + 1
        if keep < len(data):
            f.truncate(keep)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Appends one record as one line, or nothing: a write the disk (or a file size limit) cuts
    short is taken back, so every line of a results file stays a whole record. Without that, the
    end record of a run stopped by a full disk was left half-written after the engine's whole ones
    whenever the space left was smaller than it (tests/test_faults.py)."""
    data = memoryview((json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8"))
    with path.open("ab", buffering=0) as f:
        start = f.tell()
        try:
            while data:
                data = data[f.write(data):]  # a raw write may take part of it; the next one raises
        except OSError:
            f.truncate(start)
            raise


def read_results_bytes(path: Path) -> bytes:
    """A results file's bytes; a gzipped one (results.jsonl.gz, as results/ keeps its large runs)
    unpacked. OSError or ValueError where it cannot be read or is not gzip."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:  # BadGzipFile is an OSError; a file cut short, EOFError
            raise ValueError(f"not a whole gzip file ({e})") from None
    return data


def lines(data: bytes) -> Iterator[tuple[int, int, int, bool]]:
    """(number, start, end, is_last) of each line of `data` that is not blank; `is_last`: the
    file's last line has no newline, so it may be a record cut short. The bytes are walked in place:
    splitting or decoding a whole file would copy every sample array once more (most of a 470 MB
    file) before anything is parsed."""
    number, pos, size = 0, 0, len(data)
    while pos < size:
        number += 1
        end = data.find(b"\n", pos)
        is_last = end < 0
        if is_last:
            end = size
        if data[pos:end].strip():
            yield number, pos, end, is_last
        pos = end + 1


def current_params(benchmark: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` in today's names (PARAM_ALIASES), in their order; the same dict when none is old."""
    if not _OLD_NAMES.intersection(params):
        return params
    out: dict[str, Any] = {}
    for name, value in params.items():
        for benchmarks, old, old_value, new, new_value in PARAM_ALIASES:
            if name == old and (old_value is None or value == old_value) \
                    and any(fnmatch.fnmatchcase(benchmark, b) for b in benchmarks):
                if new is not None:
                    out[new] = value if new_value is None else new_value
                break
        else:
            out[name] = value
    return out


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record; a line cut short by a killed engine is left out, not fatal."""
    return read_records_and_bad_lines(path)[0]


def read_records_and_bad_lines(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Every record, and the numbers of the lines that are not JSON (damaged, or cut short)."""
    records, bad = [], []
    data = read_results_bytes(path)
    for number, start, end, _ in lines(data):
        try:
            record = json.loads(data[start:end].decode("utf-8", errors="replace"))
        except json.JSONDecodeError:
            bad.append(number)
            continue
        if isinstance(record, dict) and isinstance(record.get("params"), dict):
            record["params"] = current_params(str(record.get("benchmark", "")), record["params"])
        records.append(record)
    return records, bad
