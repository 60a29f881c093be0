"""`commatlas run --resume RUN_DIR`: continue an interrupted run in its own directory, measuring
only the points it does not have yet. A run is only continued on the machine, build and
options it was started with; anything else would mix incomparable numbers in one file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from commatlas.errors import UsageError
from commatlas.io.outputs import write_atomically
from commatlas.io.records import RESULTS_FILE, drop_partial_tail, read_records_and_bad_lines

SKIP_FILE = "resume-skip-points.txt"
# Records of the engine name their point (core/records.cpp point_key); these types are done.
DONE_TYPES = ("result", "skip", "error")


def load_resumable(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The meta record and every record of a run that may be resumed; UsageError otherwise."""
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        raise UsageError(f"--resume {run_dir}: no {RESULTS_FILE} there")
    try:
        drop_partial_tail(results)  # a record cut short is not a damaged one
        records, bad = read_records_and_bad_lines(results)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--resume {run_dir}: cannot read {results}: {e}") from None
    if not records or not isinstance(records[0], dict) or records[0].get("type") != "meta":
        raise UsageError(f"--resume {run_dir}: {results} does not start with a meta record")
    ends = [r for r in records if isinstance(r, dict) and r.get("type") == "end"]
    # A damaged line lost its record: the run is not complete while that point is missing.
    if ends and ends[-1].get("status") == "complete" and not bad:
        raise UsageError(f"--resume {run_dir}: that run is complete, there is nothing to resume")
    return records[0], records


def _hostname(engine: dict[str, Any]) -> Any:
    return (engine.get("host") or {}).get("hostname")


def _gpus(topology: dict[str, Any] | None) -> list[Any]:
    return [g.get("uuid") or g.get("name") for g in (topology or {}).get("gpus", []) if isinstance(g, dict)]


def _build(engine: dict[str, Any]) -> dict[str, Any]:
    backends = {name: bool(b.get("built")) for name, b in (engine.get("backends") or {}).items() if isinstance(b, dict)}
    return {"version": engine.get("version"), "git_sha": engine.get("git_sha"), "backends": backends}


def normalized(options: dict[str, Any]) -> dict[str, Any]:
    """Options as the meta record holds them (JSON types), without the run directory."""
    plain = json.loads(json.dumps(options))
    plain.pop("out", None)
    return plain


def check_same_run(meta: dict[str, Any], engine_info: dict[str, Any], topology: dict[str, Any] | None,
                   options: dict[str, Any], run_dir: Path) -> None:
    """Refuses (UsageError, one line) when machine, build or options differ from the run's."""
    stored_engine = meta.get("engine") or {}
    checks = (
        ("machine", "hostname", _hostname(stored_engine), _hostname(engine_info)),
        ("machine", "GPUs", _gpus(meta.get("topology")), _gpus(topology)),
        ("build", "engine", _build(stored_engine), _build(engine_info)),
    )
    for what, name, before, now in checks:
        if before != now:
            raise UsageError(f"--resume {run_dir}: the {what} differs ({name} was {before}, is {now}); "
                             f"start a new run instead")
    before, now = normalized(meta.get("options") or {}), normalized(options)
    changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    if changed:
        detail = ", ".join(f"{k} was {before.get(k)!r}, is {now.get(k)!r}" for k in changed[:3])
        raise UsageError(f"--resume {run_dir}: the options differ ({detail}); "
                         f"resume with the run's own options, or give only --resume")


def reopen(run_dir: Path) -> None:
    """Makes the results file end at its last engine record again: a half-written line and the
    interrupted run's end record go, the resumed run writes the one end record. Lines that are
    not JSON go too (their points are measured again), so the continued file reads whole."""
    results = run_dir / RESULTS_FILE
    drop_partial_tail(results)
    drop_damaged_lines(results)
    with results.open("rb+") as f:
        data = f.read()
        body = data[:-1] if data.endswith(b"\n") else data
        last_start = body.rfind(b"\n") + 1
        try:
            last = json.loads(body[last_start:])
        except ValueError:
            return
        if isinstance(last, dict) and last.get("type") == "end":
            f.truncate(last_start)


def drop_damaged_lines(results: Path) -> None:
    _, bad = read_records_and_bad_lines(results)
    if not bad:
        return
    damaged = set(bad)
    with results.open("rb") as f:
        kept = [line for number, line in enumerate(f, 1) if number not in damaged]
    write_atomically(results, b"".join(kept).decode("utf-8", errors="replace"))
    print(f"commatlas: note: --resume: dropped {len(bad)} line{'s' if len(bad) > 1 else ''} of {results} that "
          f"{'are' if len(bad) > 1 else 'is'} not valid JSON (line{'s' if len(bad) > 1 else ''} "
          f"{', '.join(map(str, bad[:5]))}); their points are measured again", file=sys.stderr)


def write_skip_points(run_dir: Path, records: list[dict[str, Any]]) -> Path:
    """The engine's --skip-points file: one point key per line, for every point already done."""
    points = sorted({r["point"] for r in records
                     if isinstance(r, dict) and r.get("type") in DONE_TYPES and isinstance(r.get("point"), str)})
    path = run_dir / SKIP_FILE
    write_atomically(path, "".join(p + "\n" for p in points))
    return path


def resume_run(run_dir: Path, options: dict[str, Any], engine_info: dict[str, Any],
               topology: dict[str, Any] | None) -> Path:
    """Checks that `run_dir` may be continued with these options here, reopens its results file
    and returns the engine's --skip-points file."""
    meta, records = load_resumable(run_dir)
    check_same_run(meta, engine_info, topology, options, run_dir)
    reopen(run_dir)
    return write_skip_points(run_dir, records)


def stored_options(run_dir: Path) -> dict[str, Any]:
    """The options a run was started with (its meta record), for `--resume` given alone."""
    meta, _ = load_resumable(run_dir)
    options = meta.get("options")
    if not isinstance(options, dict):
        raise UsageError(f"--resume {run_dir}: its meta record holds no options")
    return options
