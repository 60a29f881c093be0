#!/usr/bin/env python3
"""Do two versions of the Python package draw the same map of the same runs?

For a change to the package that must not change what a user reads (a reshaping), each run's map
is built by the package before and by the package after, and compared. The map is what the first
screen shows:
- `map`: report.html's best-interface map (bestmap.map_rows): per row its label and the movements
  it stands for, per size bin the winner's name (with its in-cache / alone / unstable / library
  marks), figure, % of peak, the size compared and whether the win is clear; and the columns;
- `views`: the fixed-allocator and fixed-MPI-library views below it;
- `terminal`: the map as `commatlas run` prints it at 80 columns, with its peak and launch lines;
- `tooltips`: each map cell's hover text (the winner's choices, the runner-up, the margin);
- `html` (with --html): the map as `commatlas report` writes it, report.html's map section with
  its two views and summary.md's map table;
- `answers`: answers.json's cells per movement (winner and runner-up mechanism, benchmark,
  allocator, value, fraction of peak, margin, clear);
- `findings` and `left_out`: the sentences under the map, and what took no part in it.
A run whose only differences are in `answers`, `findings` or `left_out` is "same map".

    python3 scripts/maps_same.py BEFORE_PYTHON AFTER_PYTHON [RUN ...] [--html] [--out DIR] [--verbose]

BEFORE_PYTHON and AFTER_PYTHON are folders holding the `commatlas` package (`python/` of a tree;
`git archive COMMIT | tar -x -C /tmp/before` gives an old one). RUN is a run folder or a folder
searched for run folders (default: `results/`); a gzipped results.jsonl.gz is read from a
decompressed temporary copy. Each side is built in its own Python process (PYTHONPATH set to it).
`--out DIR` keeps each side's maps as JSON (DIR/before.json, DIR/after.json). Prints one line per
run (identical, or which parts differ), the first differences of each differing run with
--verbose, then a summary line. Exit status 0: every map identical; 1: a map differs; 2: bad
arguments.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MAP_PARTS = ("map", "views", "terminal", "tooltips", "html")  # what the map is; the other parts are said apart
PARTS = MAP_PARTS + ("answers", "findings", "left_out")
ROOT = Path(__file__).resolve().parent.parent


# --- one side: the maps of every run, as built by the package on sys.path -------------------

def _imports() -> dict[str, Any]:
    """The functions that build the map, wherever this version of the package keeps them."""
    try:
        from commatlas.analysis.answers import compute_answers
        from commatlas.report.summary import map_table
        from commatlas.analysis import findings
    except ImportError:  # the package before it was layered (io, analysis, report)
        from commatlas.answers import compute_answers  # type: ignore[no-redef]
        from commatlas.summary import map_table  # type: ignore[no-redef]
        from commatlas.report import findings  # type: ignore[no-redef]
    # The line under the map naming the launch it shows, where the version has one.
    launch_note = getattr(findings, "launch_note", None)
    try:
        from commatlas.io.results import load_run
    except ImportError:
        from commatlas.results import load_run  # type: ignore[no-redef]
    from commatlas.report import bestmap
    return {"compute_answers": compute_answers, "map_table": map_table, "launch_note": launch_note,
            "load_run": load_run, "bestmap": bestmap}


def _rows(bestmap: Any, rows: list[Any], bins: list[str]) -> dict[str, Any]:
    def cell(c: Any) -> Any:
        if c is None:
            return None
        return {"name": c.name, "figure": c.figure, "fraction": c.fraction, "bytes": c.bytes, "clear": c.clear,
                "colour": c.colour}

    return {"rows": [{"label": r.label, "short": r.short, "keys": r.keys,
                      "cells": {bins[i]: cell(c) for i, c in enumerate(r.cells) if c is not None}} for r in rows],
            "columns": [[c.bin, c.bytes] for c in bestmap.map_columns(rows, bins)]}


def _number(v: Any) -> Any:
    """A figure as JSON keeps it (answers.json is written with allow_nan=False; inf would fail)."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def _choice(c: dict[str, Any] | None) -> Any:
    if not c:
        return None
    return {k: _number(c.get(k)) for k in ("mechanism", "benchmark", "allocator", "value", "unit", "peak_fraction",
                                             "stability")}


def _terminal(f: dict[str, Any], run: Any, answers: dict[str, Any]) -> list[str]:
    from rich.console import Console

    table = f["map_table"](answers, 80)
    if table is None:
        return []
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None, force_terminal=False, legacy_windows=False)
    console.print(table)
    lines = out.getvalue().rstrip("\n").splitlines()
    peak = f["bestmap"].host_memory_peak_line(run)
    note = f["launch_note"](answers) if f["launch_note"] else None
    return [line.rstrip() for line in lines] + [x for x in (peak, note) if x]


def one_map(f: dict[str, Any], folder: Path) -> dict[str, Any]:
    bestmap = f["bestmap"]
    run = f["load_run"](folder)
    answers = f["compute_answers"](run)
    bins = [b["label"] for b in answers["bins"]]
    rows, _ = bestmap.map_rows(answers)
    fixed, fixed_notes = bestmap.map_rows(answers, None, fixed=True)
    library, library_notes = bestmap.library_rows(answers, None)
    return {
        "map": _rows(bestmap, rows, bins),
        "views": {"allocator": _rows(bestmap, fixed, bins), "allocator_notes": fixed_notes,
                  "library": _rows(bestmap, library, bins), "library_notes": library_notes},
        "terminal": _terminal(f, run, answers),
        "answers": {mv["key"]: {c["bin"]: {"bytes": c["bytes"], "winner": _choice(c["winner"]),
                                           "runner_up": _choice(c["runner_up"]), "margin": _number(c["margin"]),
                                           "clear": c["clear"], "cache": _choice(c["cache_figure"])}
                                for c in mv["cells"]} for mv in answers["movements"]},
        "tooltips": [[c.detail for c in r.cells if c is not None] for r in rows],
        "findings": [x.get("text") for x in answers.get("findings") or []],
        "left_out": answers.get("left_out"),
    }


def _between(text: str, start: str, *ends: str) -> str:
    """The text from `start` up to the first of `ends` after it ("" where `start` is absent)."""
    a = text.find(start)
    if a < 0:
        return ""
    b = min([i for i in (text.find(e, a + len(start)) for e in ends) if i >= 0] or [len(text)])
    return text[a:b]


def rendered(folder: Path, out: Path) -> dict[str, str]:
    """The map as `commatlas report` writes it: report.html's map section and its fixed-allocator
    and fixed-library views, and summary.md's map."""
    from commatlas.report.render import write_report

    write_report(folder, out)
    html = (out / "report.html").read_text(encoding="utf-8")
    markdown = (out / "summary.md").read_text(encoding="utf-8")
    return {"report.html": _between(html, '<h2 id="best">', '<h2 id="findings">')
            + _between(html, '<details id="by-allocator">', '</details>')
            + _between(html, '<details id="by-library">', '</details>'),
            "summary.md": _between(markdown, "## Best interface", "## Findings")}


def dump(python: Path, folders: list[str], html: Path | None = None) -> None:
    """Each run's maps, by the package in `python`, as one JSON object on stdout."""
    import commatlas

    if not Path(commatlas.__file__).resolve().is_relative_to(python):
        raise SystemExit(f"maps_same: imported {commatlas.__file__}, not the package in {python}")
    f = _imports()
    out = {}
    for i, folder in enumerate(folders):
        try:
            out[folder] = one_map(f, Path(folder))
            if html is not None:
                out[folder]["html"] = rendered(Path(folder), html / str(i))
        except Exception as e:  # a run one version cannot read is a difference, said as one
            out[folder] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout, ensure_ascii=False, allow_nan=False)


# --- both sides, and the differences ---------------------------------------------------------

def find_runs(paths: list[Path]) -> list[Path]:
    """Run folders: a folder holding results.jsonl or results.jsonl.gz, or every such folder under one."""
    runs: list[Path] = []
    for p in paths:
        if not p.is_dir():
            raise SystemExit(f"maps_same: {p}: not a folder")
        found = sorted({f.parent for pattern in ("results.jsonl", "results.jsonl.gz") for f in p.rglob(pattern)})
        if not found:
            raise SystemExit(f"maps_same: {p}: holds no results.jsonl or results.jsonl.gz")
        runs += [f.resolve() for f in found]
    return runs


def readable(run: Path, scratch: Path) -> Path:
    """The folder a package reads: the run's own, or a temporary one with its records decompressed."""
    if (run / "results.jsonl").is_file():
        return run
    copy = scratch / str(len(list(scratch.iterdir())))
    copy.mkdir()
    for f in run.iterdir():  # whatever else the run keeps beside its records, as it is
        if f.is_file() and f.name != "results.jsonl.gz":
            shutil.copy2(f, copy / f.name)
    with gzip.open(run / "results.jsonl.gz", "rb") as src, open(copy / "results.jsonl", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return copy


def build(python: Path, folders: list[Path], html: Path | None = None) -> dict[str, Any]:
    python = python.resolve()
    env = {**os.environ, "PYTHONPATH": str(python), "COLUMNS": "80"}
    rendering = ["--html", str(html)] if html else []
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--dump", str(python), *rendering,
                           *map(str, folders)],
                          env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise SystemExit(f"maps_same: the package in {python} failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def differences(a: Any, b: Any, where: str = "", most: int = 8) -> list[str]:
    """The first `most` places where two JSON values differ, as 'path: before -> after'."""
    out: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if len(out) >= most or x == y:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in list(x) + [k for k in y if k not in x]:
                walk(x.get(k, "<absent>"), y.get(k, "<absent>"), f"{path}/{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y)):
                walk(p, q, f"{path}[{i}]")
        elif isinstance(x, str) and isinstance(y, str) and "\n" in x + y:  # a page: its changed lines
            for line in difflib.unified_diff(x.splitlines(), y.splitlines(), lineterm="", n=0):
                if len(out) < most and line[:1] in "+-" and line[:3] not in ("---", "+++"):
                    out.append(f"{path}: {line[:300]}")
        else:
            out.append(f"{path}: {json.dumps(x, ensure_ascii=False)[:300]} -> {json.dumps(y, ensure_ascii=False)[:300]}")

    walk(a, b, where)
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--dump"]:
        html = Path(argv[3]) if argv[2:3] == ["--html"] else None
        dump(Path(argv[1]), argv[4:] if html else argv[2:], html)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path, help="the package before: a folder holding commatlas/")
    p.add_argument("after", type=Path, help="the package after: a folder holding commatlas/")
    p.add_argument("runs", type=Path, nargs="*", help="run folders, or folders to search (default: results/)")
    p.add_argument("--out", type=Path, help="keep each side's maps as JSON in this folder")
    p.add_argument("--html", action="store_true",
                   help="also write each run's report with each package and compare their maps (several seconds a run)")
    p.add_argument("--verbose", "-v", action="store_true", help="the first differences of each differing run")
    args = p.parse_args(argv)
    for side in (args.before, args.after):
        if not (side / "commatlas" / "__init__.py").is_file():
            print(f"maps_same: {side}: holds no commatlas package", file=sys.stderr)
            return 2
    try:
        runs = find_runs(args.runs or [ROOT / "results"])
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="maps_same.") as scratch:
        folders = [readable(r, Path(scratch)) for r in runs]
        html = Path(scratch) / "reports" if args.html else None
        before = build(args.before, folders, html and html / "before")
        after = build(args.after, folders, html and html / "after")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        names = {str(f): str(r) for f, r in zip(folders, runs)}
        for name, side in (("before", before), ("after", after)):
            (args.out / f"{name}.json").write_text(json.dumps({names[k]: v for k, v in side.items()}, indent=1,
                                                              ensure_ascii=False) + "\n", encoding="utf-8")
    differ = 0
    for run, folder in zip(runs, folders):
        a, b = before[str(folder)], after[str(folder)]
        parts = [k for k in PARTS if a.get(k) != b.get(k)]
        shown = os.path.relpath(run, ROOT) if run.is_relative_to(ROOT) else str(run)
        if a.get("error") or b.get("error"):  # a run neither side could read shows no map to compare
            differ += 1
            print(f"error      {shown}: before: {a.get('error') or 'read'}; after: {b.get('error') or 'read'}")
            continue
        if not parts:
            print(f"identical  {shown}")
            continue
        map_differs = any(k in MAP_PARTS for k in parts)
        differ += map_differs
        print(f"{'differs' if map_differs else 'same map'}    {shown}: {', '.join(parts)}")
        if args.verbose:
            for k in parts:
                for line in differences(a.get(k), b.get(k), k):
                    print(f"    {line}")
    print(f"{len(runs) - differ} of {len(runs)} runs: the same map; {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
