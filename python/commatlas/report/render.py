"""Assembles the report of one run: answers.json, report.html (self-contained) and summary.md,
answer first: the best-interface map, then at most 12 findings, then the plots; everything else
(variability, precision, skips, the machine) folded below."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from markupsafe import Markup

from commatlas.analysis import harness_check
from commatlas.analysis import osu
from commatlas.analysis.answers import collect, compute_answers, write_answers
from commatlas.analysis.findings import mechanism_name
from commatlas.analysis.repeats import benchmark_spreads
from commatlas.io.engine import short_reason
from commatlas.io.outputs import write_atomically
from commatlas.io.records import read_records
from commatlas.io.results import Result, Run, group_series, load_run
from commatlas.frameworks.torch import compare as framework_compare
from commatlas.report import bestmap, figures, machine, multinode, variability
from commatlas.analysis.findings import launch_note
from commatlas.report.not_measured import NotMeasured, not_measured, variant_text
from commatlas.report.templating import compile_templates, render
from commatlas.units import format_size

MAX_FLAG_ROWS = 200
MAX_NOTES = 20


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path

    def __str__(self) -> str:
        return f"{self.html} (and {self.markdown.name})"


def write_report(run_dir: str | Path, out_dir: str | Path | None = None, allocator: str | None = None,
                 library: str | None = None) -> ReportPaths:
    """Renders the run at run_dir; writes report.html, summary.md and answers.json into out_dir
    (default: the run directory). `allocator`: the one the fixed-allocator map shows (default:
    each movement's fastest)."""
    run = load_run(run_dir)
    out = Path(out_dir) if out_dir else run.directory
    out.mkdir(parents=True, exist_ok=True)
    context, finish_drawing = _context_while_drawing(run, allocator, library)
    try:
        # What needs no figure is done while the figures are drawn in worker processes.
        write_answers(run, context["answers"], out)
        compile_templates()
    finally:
        finish_drawing()
    paths = ReportPaths(out / "report.html", out / "summary.md")
    write_atomically(paths.html, render("report.html.j2", context))
    write_atomically(paths.markdown, render("summary.md.j2", context))
    return paths


@dataclass(frozen=True)
class Imprecise:
    benchmark: str
    variant: str
    size: int | None
    target: float | None
    reached: float | None
    stopped: str


def _context_while_drawing(run: Run, allocator: str | None = None,
                           library: str | None = None) -> tuple[dict, Callable[[], None]]:
    """The report's context, its figures still being drawn; the call returned waits for them and
    puts them in place."""
    verified = [r for r in run.results if r.verified_ok]
    unverified = [r for r in run.results if not r.verified_ok]
    series, duplicate_notes = group_series(verified)
    data, _ = collect(run)
    answers = compute_answers(run)
    bins = [b["label"] for b in answers["bins"]]
    rows, _ = bestmap.map_rows(answers)
    fixed_rows, fixed_notes = bestmap.map_rows(answers, allocator, fixed=True)
    library_rows, library_notes = bestmap.library_rows(answers, library)
    flags = variability.flag_points(verified)
    raw = _raw_records(run)
    flags.sort(key=lambda f: (f.result.benchmark, f.result.params_key, f.result.bytes or 0))
    movement_figures = figures.movement_figures(data, rows)
    old_figures = figures.undeclared_figures(series)
    distributions = figures.distribution_figures(series, flags)
    finish_drawing = figures.start_drawing(movement_figures + old_figures + distributions)
    mechanisms = sorted({c.mechanism for r in rows for c in r.cells if c and not c.cache})
    context = dict(
        run=run,
        title=f"commatlas report: {(run.meta or {}).get('run_id') or run.directory.name}",
        notes=_capped(run.notes + duplicate_notes, MAX_NOTES),
        machine=machine.describe_machine(run.meta, list(dict.fromkeys(r.rank_cpus for r in run.results if r.rank_cpus))),
        answers=answers,
        rows=rows,
        columns=bestmap.map_columns(rows, bins),
        peak_line=bestmap.host_memory_peak_line(run),
        launch_note=launch_note(answers),
        fixed_rows=fixed_rows,
        fixed_columns=bestmap.map_columns(fixed_rows, bins),
        fixed_notes=fixed_notes,
        allocator=allocator,
        library_rows=library_rows,
        library_columns=bestmap.map_columns(library_rows, bins),
        library_notes=library_notes,
        library=library,
        legend=[(bestmap.colour(m), mechanism_name(m)) for m in mechanisms],
        cache_colour=bestmap.CACHE_COLOUR,
        findings=answers["findings"],
        # --tune / --sweep-env: the best setting per movement and size (answers.json's "tuning").
        tuning=answers.get("tuning") or {},
        undeclared=run.undeclared,
        movement_figures=movement_figures,
        old_figures=old_figures,
        rules=variability.RULES,
        flags=flags[:MAX_FLAG_ROWS],
        flags_left=max(0, len(flags) - MAX_FLAG_ROWS),
        imprecise=_imprecise(verified),
        repeat_spreads=benchmark_spreads(verified),
        distributions=distributions,
        skipped=not_measured(run.skips, lambda s: short_reason(s.reason)),
        failed=not_measured(run.failures, lambda f: short_reason(f.message))
        + [NotMeasured(r.benchmark, variant_text(r), format_size(r.bytes), "data check did not pass") for r in unverified],
        missing=_missing(run, series),
        osu_rows=osu.comparison_rows(raw),
        harness=harness_check.harness_check(run),
        harness_rule=harness_check.RULE,
        counts=dict(results=len(run.results), series=len(series), skipped=len(run.skips), failed=len(run.failures),
                    movements=len(answers["movements"])),
        # Multi-node part (node pairs, expected goodput, soak noise): its own module, one fragment.
        multinode=Markup(multinode.section_html(raw)),
        # The torch suite beside the engine (what PyTorch adds, the DDP step): its own module.
        framework=_framework_fragment(raw),
    )
    return context, finish_drawing


def _framework_fragment(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    html = framework_compare.section_html(records)
    return {"html": Markup(html), "markdown": framework_compare.section_markdown(records)} if html else None


def _raw_records(run: Run) -> list[dict[str, Any]]:
    """The records as dicts, for the parts that read them so (the OSU rows, multi-node soaks)."""
    try:
        return read_records(run.path) if run.path.is_file() else []
    except OSError:
        return []


def _imprecise(results: list[Result]) -> list[Imprecise]:
    """Points whose timing did not reach the harness's precision target (timing.precision)."""
    out = []
    for r in results:
        p = r.timing.precision
        if p is not None and not p.met:
            out.append(Imprecise(r.benchmark, variant_text(r), r.bytes, p.target, p.reached, p.stopped))
    return out[:MAX_FLAG_ROWS]


def _capped(lines: list[str], most: int) -> list[str]:
    return lines if len(lines) <= most else lines[:most] + [f"… and {len(lines) - most} more like these."]


def _missing(run: Run, series) -> list[str]:
    """What an interrupted or partial run lacks, as far as the file itself can tell."""
    if run.complete:
        return []
    out = [f"The run's status is: {run.status}."]
    last = max(run.results + run.skips + run.failures, key=lambda p: p.line, default=None)
    if last:
        out.append(f"The last record (line {last.line}) is {last.benchmark} ({variant_text(last)}) at "
                   f"{format_size(last.bytes)}; every point the run would have measured after it is missing.")
    longest: dict[str, int] = {}
    for s in series:
        longest[s.benchmark] = max(longest.get(s.benchmark, 0), len(s.points))
    for s in series:
        if len(s.points) < longest[s.benchmark]:
            out.append(f"{s.label()} stops at {format_size(s.points[-1].bytes)}: "
                       f"{longest[s.benchmark] - len(s.points)} size(s) fewer than its sibling series.")
    return _capped(out, MAX_NOTES)


def render_tuning_html(answer: dict[str, Any]) -> str:
    """The report's tuning section (templates/_tuning.html.j2); empty without swept variables."""
    return render("_tuning.html.j2", {"tuning": answer})
