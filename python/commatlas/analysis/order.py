"""Judging a run against its benchmarks measured alone (`commatlas check-order`, which runs the jobs:
commatlas.run.order_check): every point of the run beside the same point measured in a job of its
own, matched and judged by compare's point matching and tolerance rule. Each point gets one verdict:

- "agrees": within compare's tolerance;
- "differs": beyond it, with both figures and the ratio;
- "unstable": a record of either side says its batches did not repeat (timing.stability.verdict,
  where the engine writes it), so neither figure can be held against the other; with several jobs
  on a side (3 or more), at least half of them (repeats.side_unstable: a minority is outvoted).
  Where every pass of one side lies beyond every pass of the other, the point differs all the same
  (compare.passes_apart);
- "not alone": the job of its own has no result for it (the skip or error it wrote instead, or why
  the job failed). A point that runs only after another benchmark is an order dependence too.

With several rounds of jobs alone (`check-order --rounds N`), each round's records are one
repetition of the "alone" side: compare then takes its tolerance from how far the jobs alone lie
apart (its --repeat rule) and the median over them as the figure. A point that varies by ±11% from
one fresh job to the next (SM copies at 4 KiB-1 MiB on 2x H200) is then not called an order
dependence for a difference of that size, which one job alone against one run cannot tell apart.

The run itself is one job, and a figure that moves between identical jobs (GPU-aware MPI's CPU-bound
part on 2x H100: the 64 KiB bandwidth near 14 GB/s in some jobs, near 10 in others, whatever ran
first) can be drawn in one state by the run and in the other by every job alone. With jobs in the
run's order (`check-order --in-order`: each round also runs the checked benchmarks after the
benchmarks that ran before them in the run's job), the run's side is the run and those jobs, each
one repetition: the tolerance then holds both sides' job-to-job spread, and the figure is the median
over them. A point differs only when its benchmark alone and its benchmark in the run's order
disagree beyond what fresh jobs of either kind show. A point whose jobs spread beyond the tolerance
on a side, with the two sides' ranges overlapping, is "unstable" (compare's between-jobs rule): both
sides drew its states, so neither median is held against the other. Sides apart, job for job, differ.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from commatlas.analysis.compare import center, compare_two, group_points, run_settings
from commatlas.analysis.repeats import side_unstable
from commatlas.errors import EXIT_INTERRUPTED, CommatlasError
from commatlas.io.results import Failure, Result, Run, load_run

AGREES, DIFFERS, UNSTABLE, NOT_ALONE = "agrees", "differs", "unstable", "not alone"
VERDICTS = (AGREES, DIFFERS, UNSTABLE, NOT_ALONE)
FAILING = (DIFFERS, NOT_ALONE)


@dataclass(frozen=True)
class PointVerdict:
    benchmark: str
    variant: str
    bytes: int | None
    metric: str
    verdict: str               # one of VERDICTS
    full: float | None         # the run's figure (GB/s or us); None when it has none
    alone: float | None        # the figure measured alone
    ratio: float | None        # alone / full in the metric's unit
    why: str


@dataclass(frozen=True)
class AloneRun:
    benchmark: str
    directory: Path
    ok: bool
    message: str  # why the job failed; "" when it did not
    wall_s: float
    round: int = 1  # which round of jobs alone (check-order --rounds)


@dataclass
class OrderCheck:
    run: Path
    directory: Path
    rule: str
    points: list[PointVerdict] = field(default_factory=list)
    alone: list[AloneRun] = field(default_factory=list)
    in_order: list[AloneRun] = field(default_factory=list)  # check-order --in-order: the jobs in the run's order
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C: the benchmarks measured alone until then are judged

    def count(self, verdict: str) -> int:
        return sum(p.verdict == verdict for p in self.points)

    @property
    def exit_status(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return 1 if any(p.verdict in FAILING for p in self.points) else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "run": str(self.run), "directory": str(self.directory), "rule": self.rule,
            "interrupted": self.interrupted,
            "counts": {v: self.count(v) for v in VERDICTS},
            "alone_runs": [{**asdict(a), "directory": str(a.directory)} for a in self.alone],
            "in_order_runs": [{**asdict(a), "directory": str(a.directory)} for a in self.in_order],
            "notes": self.notes,
            "points": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                        for k, v in asdict(p).items()} for p in self.points],
        }


def unstable_results(run: Run) -> set[int]:
    """id() of the results whose confirmation batch did not repeat their figure (results.Result
    .stability, from the run's stability records or, in older records, timing.stability). Runs
    from engines that do not confirm points mark nothing."""
    return {id(r) for r in run.results if r.stability == "unstable"}


def merged(runs: list[Run], path: Path) -> Run:
    """The jobs alone as one run, so that compare matches and judges them in one pass."""
    first = next((r for r in runs if r.meta), None)
    return Run(path, first.meta if first else None, [x for r in runs for x in r.results],
               [x for r in runs for x in r.skips], [x for r in runs for x in r.failures], None, [])


def subset(run: Run, keys: set[str]) -> Run:
    return Run(run.path, run.meta, [r for r in run.results if r.benchmark in keys],
               [s for s in run.skips if s.benchmark in keys], [f for f in run.failures if f.benchmark in keys],
               run.end, run.notes)


def with_jobs_in_order(base: Run, keys: set[str], in_order: list[AloneRun]) -> tuple[Run, list[Run]]:
    """The run's side: the run's points of `keys` and, where there are jobs in the run's order, theirs,
    every job one repetition (the run's own --repeat passes keep their numbers; the jobs follow)."""
    scoped = subset(base, keys)
    if not in_order:
        return scoped, []
    taken = [r.repeat for r in (*scoped.results, *scoped.skips, *scoped.failures) if r.repeat is not None]
    for point in (*scoped.results, *scoped.skips, *scoped.failures):
        if point.repeat is None:
            point.repeat = 0
    first = max(taken, default=0) + 1
    jobs = []
    for n, job in enumerate(in_order):
        try:
            run = subset(load_run(job.directory), keys)
        except CommatlasError:
            continue  # a job in order that wrote nothing: the run and the other jobs stand
        for point in (*run.results, *run.skips, *run.failures):
            point.repeat = first + n
        jobs.append(run)
    # The run's skips and errors stay the run's: a point the run did not measure is not made up by
    # the jobs in order.
    return Run(scoped.path, scoped.meta, scoped.results + [x for j in jobs for x in j.results],
               scoped.skips, scoped.failures, scoped.end, scoped.notes), jobs


def judge_order(base: Run, alone: list[AloneRun], directory: Path, in_order: list[AloneRun] = ()) -> OrderCheck:
    """Every point of `base` that its benchmark's job alone measured (at the sizes that job
    planned), with its verdict. `in_order`: jobs that ran the same benchmarks in the run's order,
    set beside the run as repetitions of its side."""
    keys = {a.benchmark for a in alone}
    several = len({a.round for a in alone}) > 1 or bool(in_order)
    runs: dict[str, Run] = {}
    alone_runs: list[Run] = []
    for a in alone:
        try:
            job = subset(load_run(a.directory), {a.benchmark})
        except CommatlasError:
            continue  # no records: its points are "not alone" with the job's own message
        if several:  # each round is one repetition of the alone side
            for point in (*job.results, *job.skips, *job.failures):
                point.repeat = a.round
        alone_runs.append(job)
        # The points a benchmark has alone: any round's (one that failed in a round is judged on the others).
        held = runs.get(a.benchmark)
        runs[a.benchmark] = job if held is None else merged([held, job], held.path)
    other = merged(alone_runs, directory / "results.jsonl")
    scoped, ordered = with_jobs_in_order(base, keys, list(in_order))
    comparison = compare_two(scoped, other)
    check = OrderCheck(base.path.parent, directory, comparison.rule.text, alone=alone, in_order=list(in_order))
    if in_order:
        check.notes.append(f"the run's side is the run and {len(ordered)} job{'s' if len(ordered) != 1 else ''} "
                           f"in its order, each one repetition: 'full' is the median over them")
    check.notes += [f"metadata differs from the run: {k}: {a} → {b}" for k, a, b in comparison.meta_diffs
                    if not k.startswith("options.") and not k.endswith("_available_bytes")][:5]

    settings = run_settings(scoped.results, other.results)
    base_groups, alone_groups = group_points(scoped.results, settings), group_points(other.results, settings)
    unstable = (unstable_results(scoped) | {i for r in ordered for i in unstable_results(r)}
                | {i for r in alone_runs for i in unstable_results(r)})
    for p in comparison.points:
        if p.key is None:
            continue
        # A side of several jobs is unstable when at least half of them did not repeat (compare's rule).
        sides = []
        for side, groups in (("the run", base_groups), ("alone", alone_groups)):
            jobs = groups.get(p.key, [])
            if side_unstable(sum(id(r) in unstable for r in jobs), len(jobs)):
                sides.append(side)
        if sides and not p.verdict.different:
            verdict, why = UNSTABLE, f"batches did not repeat ({' and '.join(sides)}): {p.verdict.why}"
        elif p.verdict.unstable:
            verdict, why = UNSTABLE, p.verdict.why
        else:
            verdict, why = (DIFFERS if p.verdict.different else AGREES), p.verdict.why
        check.points.append(PointVerdict(p.benchmark, p.variant.removeprefix(", ") or "-", p.size, p.metric,
                                         verdict, p.base, p.other, p.ratio, why))

    matched = {p.key for p in comparison.points}
    planned = planned_sizes(runs)
    by_key = {a.benchmark: a for a in alone if a.round == 1}
    outside = 0
    for key, results in base_groups.items():
        if key in matched:
            continue
        benchmark, size = key[0], key[3]
        job = by_key[benchmark]
        if benchmark in planned and size not in planned[benchmark]:
            outside += 1
            continue
        r = results[0]
        variant = ", ".join(f"{k}={v}" for k, v in key[1]) + (f", {r.ranks} ranks" if r.ranks > 1 else "")
        check.points.append(PointVerdict(benchmark, variant.removeprefix(", ") or "-", size, r.metric, NOT_ALONE,
                                         center(results).median, None, None,
                                         why_not_alone(runs.get(benchmark), job, r)))
    if outside:
        check.notes.append(f"{outside} points of the run lie at sizes the jobs alone did not measure (--sizes)")
    order = {k: i for i, k in enumerate(dict.fromkeys(a.benchmark for a in alone))}
    check.points.sort(key=lambda p: (order.get(p.benchmark, len(order)), p.variant, p.bytes or 0))
    return check


def planned_sizes(runs: dict[str, Run]) -> dict[str, set[int | None]]:
    """Per benchmark, every size its job alone wrote a record for (result, skip or error)."""
    sizes: dict[str, set[int | None]] = {}
    for key, run in runs.items():
        for point in (*run.results, *run.skips, *run.failures):
            if point.benchmark == key:
                sizes.setdefault(key, set()).add(point.bytes)
    return sizes


def why_not_alone(run: Run | None, job: AloneRun, r: Result) -> str:
    if run is None:
        return f"the job alone wrote no records: {job.message or 'no reason given'}"
    for p in (*run.failures, *run.skips):
        if p.benchmark == r.benchmark and p.bytes == r.bytes and all(
                p.params.get(k) == v for k, v in r.params.items() if k in p.params):
            return f"alone it wrote an error: {p.message}" if isinstance(p, Failure) else f"alone it was skipped: {p.reason}"
    if not job.ok:
        return f"the job alone failed: {job.message}"
    return "the job alone has no result for this variant"


def verdict_counts(points: list[PointVerdict]) -> str:
    """'22 agree, 1 differs': the verdicts that occur."""
    words = {AGREES: "agree", DIFFERS: "differ", UNSTABLE: "unstable", NOT_ALONE: "not alone"}
    parts = [f"{n} {words[v]}" for v in VERDICTS if (n := sum(p.verdict == v for p in points))]
    return ", ".join(parts) or "no point"
