"""`commatlas check-order RUN_DIR`: is every figure of a run the same when its benchmark runs alone?

A figure must not depend on what ran before it in the job. One that does (a library or driver state
that an earlier benchmark happened to set up) reads the same "verified by bytes" either way, so
nothing inside one run can show it. The check re-measures each selected benchmark of a finished run
in a job of its own, `commatlas run --only KEY` with the run's own options (suites, sizes, ranks,
launcher, threads, NUMA nodes, precision, tier: its meta record), into ORDER_DIR/KEY/, and sets
every point measured alone beside the same point of the run, matched and judged by
`commatlas compare` (commatlas.analysis.order, on compare's point matching and its tolerance rule,
whatever that rule is). Each point gets one verdict:

- "agrees": within compare's tolerance;
- "differs": beyond it, with both figures and the ratio;
- "unstable": a record of either side says its batches did not repeat (timing.stability.verdict,
  where the engine writes it), so neither figure can be held against the other;
- "not alone": the job of its own has no result for it (the skip or error it wrote instead, or why
  the job failed). A point that runs only after another benchmark is an order dependence too.

`--rounds N` measures every benchmark alone N times, in N rounds (every benchmark once per round,
round after round, into ORDER_DIR/round-K/KEY/): the jobs alone then show how far a fresh job
varies on its own, and compare's --repeat rule takes its tolerance from that
(commatlas.analysis.order).

Exit status 0 when every point agrees or is unstable, 1 when a point differs or was not measured
alone, 2 for bad input. The verdicts go to ORDER_DIR/order-check.json.
"""
from __future__ import annotations

import io
import json
import time
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from rich.console import Console
from rich.table import Table

from commatlas.analysis.order import (
    AGREES, DIFFERS, FAILING, NOT_ALONE, UNSTABLE, AloneRun, OrderCheck, judge_order, verdict_counts,
)
from commatlas.errors import EXIT_INTERRUPTED, CommatlasError, UsageError
from commatlas.io.engine import Engine
from commatlas.io.outputs import check_dir_target, write_text
from commatlas.io.results import Run, load_run
from commatlas.run.execute import RunOptions, execute
from commatlas.run.selection import Selection
from commatlas.units import format_ratio, format_size, format_value

DIRECTORY = "order-check"
MAX_ROUNDS = 20
JSON_NAME = "order-check.json"
TERMINAL_ROWS = 40


# --- what to re-measure, and how -----------------------------------------------------------------


def run_options(run: Run) -> RunOptions:
    """The options the run was made with; a run whose passes differ by more than repetition is
    refused (each pass would need its own job alone)."""
    stored = (run.meta or {}).get("options")
    if not isinstance(stored, dict):
        raise UsageError(f"{run.path}: no meta record with the run's options (check-order re-runs with them)")
    for name, flag in (("sweep_env", "--sweep-env"), ("tune", "--tune"), ("soak", "--soak")):
        if stored.get(name):
            raise UsageError(f"{run.directory} was made with {flag}: check-order takes a run of one pass "
                             f"per repetition")
    try:
        return RunOptions.from_meta(stored)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise UsageError(f"{run.path}: its meta record's options cannot be read ({e})") from None


def alone_options(options: RunOptions, key: str, out: Path, sizes: str | None,
                  time_budget: float | None) -> RunOptions:
    """One benchmark in a job of its own, otherwise the run's options; one pass."""
    return replace(options, selection=Selection(None, (key,), ()), out=out, repeat=1,
                   sizes=sizes if sizes is not None else options.sizes,
                   time_budget=time_budget if time_budget is not None else options.time_budget)


def benchmarks_to_check(run: Run, engine_keys: set[str], only: tuple[str, ...],
                        exclude: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The run's benchmarks with a result, in the run's order, that the engine can run alone and
    the globs select; and a note per benchmark left out because the engine cannot."""
    measured = list(dict.fromkeys(r.benchmark for r in run.results))
    for pattern in only:
        if not any(fnmatchcase(key, pattern) for key in measured):
            raise UsageError(f"--only {pattern}: no benchmark of {run.directory} matches it")
    chosen = [k for k in measured if (not only or any(fnmatchcase(k, p) for p in only))
              and not any(fnmatchcase(k, p) for p in exclude)]
    foreign = [k for k in chosen if k not in engine_keys]
    notes = [f"{k}: not a benchmark of this engine (written by another program of the run), left out"
             for k in foreign]
    keys = [k for k in chosen if k in engine_keys]
    if not keys:
        raise UsageError(f"nothing of {run.directory} to re-measure: the selection holds no benchmark of this engine")
    return keys, notes


def in_order_selection(run: Run, keys: list[str], engine_keys: set[str]) -> list[str]:
    """The benchmarks a job in the run's order runs: in each kind of job the checked benchmarks ran
    in (one process, or ranks under a launcher), every benchmark of the run that the engine ran up
    to the last of them (a job runs its benchmarks in key order), so each checked one finds behind
    it what it found in the run. Programs of their own (the OSU-method reference) ran in jobs of
    their own and are left out."""
    kinds: dict[str, bool] = {}
    for point in (*run.results, *run.skips, *run.failures):
        if point.benchmark in engine_keys:
            kinds.setdefault(point.benchmark, (point.ranks or 1) > 1)
    chosen: set[str] = set()
    for in_ranks in {kinds[k] for k in keys}:
        last = max(k for k in keys if kinds[k] == in_ranks)
        chosen |= {b for b, kind in kinds.items() if kind == in_ranks and b <= last}
    return sorted(chosen)


def prepare_directory(run: Run, out: Path | None) -> Path:
    directory = out if out is not None else run.directory / DIRECTORY
    check_dir_target(directory)
    if directory.is_dir() and ((directory / JSON_NAME).exists() or any(directory.glob("*/results.jsonl"))
                               or any(directory.glob("round-*/*/results.jsonl"))):
        raise UsageError(f"{directory} already holds an order check: give --out DIR for a new one")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def alone_directory(directory: Path, key: str, round_: int, rounds: int) -> Path:
    return directory / key if rounds == 1 else directory / f"round-{round_}" / key


IN_ORDER = "in-order"  # the folder of a round's job in the run's order (no benchmark key has a dash)


def measure_alone(keys: list[str], options: RunOptions, engine: Engine, directory: Path,
                  sizes: str | None, time_budget: float | None, progress: Console,
                  rounds: int = 1, in_order: list[str] | None = None) -> tuple[list[AloneRun], list[AloneRun], bool]:
    """A fresh `commatlas run --only KEY` per benchmark, `rounds` times (every benchmark once per
    round), and with `in_order` (in_order_selection) one job of those benchmarks per round after
    the round's jobs alone, into round-K/in-order/; a job's terminal output is kept in its
    terminal.txt, a failure is recorded and the next job runs. Ctrl-C stops after the job it
    interrupts, which is left out; True in third place when that happened."""
    done, ordered = [], []
    jobs = [(r, key) for r in range(1, rounds + 1) for key in [*keys, *([IN_ORDER] if in_order else [])]]
    for number, (round_, key) in enumerate(jobs, 1):
        out = (directory / f"round-{round_}" / IN_ORDER if key == IN_ORDER
               else alone_directory(directory, key, round_, rounds if not in_order else max(rounds, 2)))
        label = (f"{'in order' if key == IN_ORDER else 'alone'} {number}/{len(jobs)} "
                 + (f"({len(in_order or [])} benchmarks)" if key == IN_ORDER else key)
                 + (f" (round {round_})" if rounds > 1 else ""))
        quiet = Console(file=io.StringIO(), width=100, highlight=False)
        started = time.monotonic()
        job_options = (alone_options(options, key, out, sizes, time_budget) if key != IN_ORDER else
                       replace(alone_options(options, key, out, sizes, time_budget),
                               selection=Selection(None, tuple(in_order or ()), ())))
        try:
            status = execute(job_options, engine, quiet, quiet, report=False)
            message = "" if status == 0 else f"exit status {status}"
        except KeyboardInterrupt:
            status, message = EXIT_INTERRUPTED, ""
        except CommatlasError as e:
            status, message = e.exit_status, str(e)
        ok = status == 0
        if status == EXIT_INTERRUPTED:
            progress.print(f"{label}: interrupted; judging the {len(done) + len(ordered)} jobs measured before it",
                           soft_wrap=True, highlight=False)
            return done, ordered, True
        wall = time.monotonic() - started
        text = quiet.file.getvalue()  # type: ignore[attr-defined]
        if out.is_dir():
            (out / "terminal.txt").write_text(text, encoding="utf-8")
        (ordered if key == IN_ORDER else done).append(AloneRun(key, out, ok, message, round(wall, 2), round_))
        progress.print(f"{label}: " + (f"{wall:.1f} s" if ok else f"failed after {wall:.1f} s: {message}"),
                       soft_wrap=True, highlight=False)
    return done, ordered, False


# --- the command ------------------------------------------------------------------------------------

def check_order(run_dir: str | Path, only: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
                sizes: str | None = None, time_budget: float | None = None, out: Path | None = None,
                engine: Engine | None = None, console: Console | None = None, rounds: int = 1,
                in_order: bool = False) -> OrderCheck:
    console = console or Console(highlight=False)
    base = load_run(run_dir)
    options = run_options(base)
    if not 1 <= rounds <= MAX_ROUNDS:
        raise UsageError(f"--rounds needs a whole number from 1 to {MAX_ROUNDS}, got {rounds}")
    if time_budget is not None and not time_budget > 0:
        raise UsageError(f"--time-budget needs a positive number of seconds, got {time_budget:g}")
    engine = engine or Engine.find()
    # The engine validates sizes and budget once here, before any job starts.
    probe = alone_options(options, "x", Path("."), sizes, time_budget)
    engine_keys = {b["key"] for b in engine.benchmarks(probe.engine_arguments())}
    keys, notes = benchmarks_to_check(base, engine_keys, only, exclude)
    directory = prepare_directory(base, out)
    console.print(f"check-order: {len(keys)} benchmark{'s' if len(keys) != 1 else ''} of {base.directory}, "
                  f"each in a job of its own"
                  + (f", {rounds} rounds" if rounds > 1 else "") + f" (records in {directory})",
                  soft_wrap=True, highlight=False)
    if options.repeat > 1:
        notes.append(f"the run has {options.repeat} passes; each job alone measures one")
    if time_budget is not None and time_budget != options.time_budget:
        # The budget sets each point's warm-up and sample count: a point can differ for that alone.
        run_budget = f"{options.time_budget:g} s" if options.time_budget else "the engine's default"
        notes.append(f"the jobs alone ran with --time-budget {time_budget:g} s per point, the run with {run_budget}: "
                     "their warm-ups and sample counts differ, so a difference may come from that, not from order")
    if rounds == 1:
        notes.append("one job alone per benchmark: a point that varies from one fresh job to the next by more than "
                     "compare's tolerance reads as 'differs' here; --rounds 3 measures that variation and judges within it")
    ordered_keys = in_order_selection(base, keys, engine_keys) if in_order else None
    if ordered_keys:
        console.print(f"each round also runs {len(ordered_keys)} benchmarks in the run's order, in one job "
                      f"(the checked ones and what ran before them in the run)", soft_wrap=True, highlight=False)
    elif not in_order:
        notes.append("the run is one job: a point whose state moves between identical jobs may have drawn another "
                     "state in the run than in every job alone; --in-order re-runs the run's order beside them")
    alone, ordered, interrupted = measure_alone(keys, options, engine, directory, sizes, time_budget, console,
                                                rounds, ordered_keys)
    check = judge_order(base, alone, directory, ordered)
    check.interrupted = interrupted
    if interrupted:
        notes.append(f"interrupted: {len(alone)} of {len(keys) * rounds} jobs alone were measured and judged")
    check.notes = notes + check.notes
    write_text(directory / JSON_NAME, json.dumps(check.as_json(), indent=1) + "\n")
    return check


def print_check(check: OrderCheck, console: Console) -> None:
    console.print(f"rule: {check.rule}", soft_wrap=True, highlight=False)
    for note in check.notes:
        console.print(f"note: {note}", soft_wrap=True, highlight=False)
    against = "the run and its jobs in order" if check.in_order else "the full run"
    table = Table(title=f"each benchmark alone against {against}", title_justify="left", box=None,
                  pad_edge=False, header_style="bold")
    table.add_column("benchmark", no_wrap=True)
    table.add_column("points", justify="right")
    table.add_column("verdicts", overflow="fold")
    table.add_column("alone / full", no_wrap=True)
    for benchmark in dict.fromkeys(a.benchmark for a in check.alone):
        mine = [p for p in check.points if p.benchmark == benchmark]
        ratios = [p.ratio for p in mine if p.ratio is not None and p.ratio > 0]
        spread = "-" if not ratios else (format_ratio(min(ratios)) if len(ratios) == 1 else
                                         f"{format_ratio(min(ratios))[:-1]}–{format_ratio(max(ratios))}")
        failing = any(p.verdict in FAILING for p in mine)
        style = "red" if failing else ("yellow" if any(p.verdict == UNSTABLE for p in mine) else "")
        table.add_row(benchmark, str(len(mine)), verdict_counts(mine), spread, style=style)
    console.print(table)
    bad = [p for p in check.points if p.verdict != AGREES]
    if bad:
        console.print("\npoints that do not agree:", style="bold")
    for p in bad[:TERMINAL_ROWS]:
        alone = format_value(p.alone, p.metric) if p.alone is not None else "-"
        ratio = f" ({format_ratio(p.ratio)})" if p.ratio is not None else ""
        console.print(f"{p.verdict:<9} {p.benchmark} {format_size(p.bytes)}: full run "
                      f"{format_value(p.full, p.metric) if p.full is not None else '-'}, alone {alone}{ratio}",
                      style="yellow" if p.verdict == UNSTABLE else "red", soft_wrap=True, highlight=False)
        console.print(f"          {p.variant}; {p.why}", soft_wrap=True, highlight=False, style="dim")
    if len(bad) > TERMINAL_ROWS:
        console.print(f"… {len(bad) - TERMINAL_ROWS} more in {check.directory / JSON_NAME}")
    n = len(check.points)
    console.print(f"\n{check.count(AGREES)} of {n} points agree alone; {check.count(DIFFERS)} differ beyond "
                  f"compare's tolerance, {check.count(UNSTABLE)} unstable, {check.count(NOT_ALONE)} not "
                  f"measured alone", highlight=False)
    console.print(f"verdicts: {check.directory / JSON_NAME}", soft_wrap=True, highlight=False)
