"""Assembles the report of one run: report.html (self-contained) and summary.md."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from commatlas.repeats import benchmark_spreads
from commatlas.report import bestmap, figures, findings, machine, multinode, variability
from commatlas.report.templating import render
from commatlas.units import format_size
from commatlas.results import Point, Run, group_series, load_run

MAX_FLAG_ROWS = 200
MAX_NOTES = 20
DETAIL_GROUPS = 40  # best-map groups with a per-size table (the page stays a few MB)


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path

    def __str__(self) -> str:
        return f"{self.html} (and {self.markdown.name})"


@dataclass(frozen=True)
class NotMeasured:
    benchmark: str
    variant: str
    sizes: str
    reason: str


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> ReportPaths:
    """Renders the run at run_dir; writes into out_dir (default: the run directory)."""
    run = load_run(run_dir)
    context = build_context(run)
    out = Path(out_dir) if out_dir else run.directory
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(out / "report.html", out / "summary.md")
    paths.html.write_text(render("report.html.j2", context), encoding="utf-8")
    paths.markdown.write_text(render("summary.md.j2", context), encoding="utf-8")
    return paths


def build_context(run: Run) -> dict:
    verified = [r for r in run.results if r.verified_ok]
    unverified = [r for r in run.results if not r.verified_ok]
    series, duplicate_notes = group_series(verified)
    maps = bestmap.best_interface_map(series)
    flags = variability.flag_points(verified)
    flags.sort(key=lambda f: (f.result.benchmark, f.result.params_key, f.result.bytes or 0))
    sections = figures.curve_sections(series)
    matrices = figures.pair_matrices(series)
    distributions = figures.distribution_figures(series, flags)
    finish_drawing = figures.start_drawing([f for s in sections for f in s.figures] + matrices + distributions)
    context = dict(
        run=run,
        title=f"commatlas report: {(run.meta or {}).get('run_id') or run.directory.name}",
        notes=_capped(run.notes + duplicate_notes, MAX_NOTES),
        machine=machine.describe_machine(run.meta),
        findings=findings.find_effects(series, maps, flags),
        maps=bestmap.group_maps(maps, figures.plot_anchor),
        detail_groups=DETAIL_GROUPS,
        plot_anchor=figures.plot_anchor,
        sections=sections,
        matrices=matrices,
        rules=variability.RULES,
        flags=flags[:MAX_FLAG_ROWS],
        flags_left=max(0, len(flags) - MAX_FLAG_ROWS),
        repeat_spreads=benchmark_spreads(verified),
        distributions=distributions,
        skipped=_not_measured(run.skips, lambda s: s.reason),
        failed=_not_measured(run.failures, lambda f: f.message)
        + [NotMeasured(r.benchmark, _variant(r), format_size(r.bytes), "data check did not pass") for r in unverified],
        missing=_missing(run, series),
        counts=dict(results=len(run.results), series=len(series), skipped=len(run.skips), failed=len(run.failures)),
        # Multi-node part (node pairs, expected goodput, soak noise): its own module, one fragment.
        multinode=_multinode_fragment(run),
    )
    finish_drawing()
    return context


def _multinode_fragment(run: Run):
    from markupsafe import Markup

    from commatlas.records import read_records

    try:
        records = read_records(run.path)
    except OSError:
        return ""
    return Markup(multinode.section_html(records))


def _capped(lines: list[str], most: int) -> list[str]:
    return lines if len(lines) <= most else lines[:most] + [f"… and {len(lines) - most} more like these."]


def _variant(p: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.params_key) or "-"


def _not_measured(points: list[Point], why) -> list[NotMeasured]:
    """One row per benchmark, variant and reason, listing its sizes: a run can skip thousands."""
    rows: dict[tuple[str, str, str], list[int | None]] = {}
    for p in points:
        rows.setdefault((p.benchmark, _variant(p), why(p)), []).append(p.bytes)
    out = []
    for (bench, variant, reason), sizes in rows.items():
        known = sorted(s for s in sizes if s is not None)
        text = "all" if not known else ", ".join(format_size(s) for s in known[:8]) + (
            f" … ({len(known)} sizes)" if len(known) > 8 else "")
        out.append(NotMeasured(bench, variant, text, reason))
    return out


def _missing(run: Run, series) -> list[str]:
    """What an interrupted or partial run lacks, as far as the file itself can tell."""
    if run.complete:
        return []
    out = [f"The run's status is: {run.status}."]
    last = max(run.results + run.skips + run.failures, key=lambda p: p.line, default=None)
    if last:
        out.append(f"The last record (line {last.line}) is {last.benchmark} ({_variant(last)}) at "
                   f"{format_size(last.bytes)}; every point the run would have measured after it is missing.")
    longest: dict[str, int] = {}
    for s in series:
        longest[s.benchmark] = max(longest.get(s.benchmark, 0), len(s.points))
    for s in series:
        if len(s.points) < longest[s.benchmark]:
            out.append(f"{s.label()} stops at {format_size(s.points[-1].bytes)}: "
                       f"{longest[s.benchmark] - len(s.points)} size(s) fewer than its sibling series.")
    return _capped(out, MAX_NOTES)
