"""The summary printed at the end of a run, answer first: the best-interface map condensed to
size bands over which the winner does not change (one line per band), the findings, then pair
matrices, one line on the harness against its bare reference loops, skips and errors. It fits the terminal, and NO_TERMINAL_WIDTH (80) columns when there is no
terminal (CI, `| head`), in the layout an 80-column terminal gets."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from commatlas.analysis.agreement import MEANING
from commatlas.analysis.answers import compute_answers
from commatlas.analysis.harness_check import harness_check
from commatlas.analysis.osu import comparison_rows
from commatlas.analysis.pair_matrix import matrix_table, pair_matrices
from commatlas.io.engine import short_reason
from commatlas.io.results import ResultsError, Run, run_from_records
from commatlas.report.bestmap import bands, host_memory_peak_line, map_rows
from commatlas.report.not_measured import not_measured
from commatlas.analysis.findings import launch_note
from commatlas.units import format_ratio, format_size

NO_TERMINAL_WIDTH = 80
TERMINAL_FINDINGS = 6  # the rest are in report.html and summary.md
TERMINAL_TUNING = 8    # lines of the tuning answer; the rest are in report.html and summary.md


MAP_TITLE = "Best interface per movement and size (in cache: cache figures only; alone: no rival measured)"
MAP_COLUMNS = ("sizes", "fastest", "figure, % of peak")
_GAP = "  "
_MIN_LABEL_COLUMN = 28  # "GPU 0 load latency, host memory" folds once; shorter ones not at all


def map_table(answers: dict[str, Any], width: int | None = None) -> Table | Group | None:
    """The map, one line per size band. Where the band columns leave the movement labels too little room
    in `width` columns, each movement is a line of its own above its bands: at 80 columns the
    side-by-side table folded "host memory ⇄ GPU 0" after "GPU" and "bucketed_allreduce" inside the
    word."""
    rows, _ = map_rows(answers)
    if not rows:
        return None
    movements = [(row.short, [(band.sizes, band.name, band.figures) for band in bands(row)]) for row in rows]
    widths = [max([len(MAP_COLUMNS[i])] + [len(b[i]) for _, bs in movements for b in bs]) for i in range(3)]
    label = max(len("movement"), *(len(short) for short, _ in movements))
    # Side by side while the label column keeps room for most labels on one line (a long one then
    # folds between words); narrower than that, stacked.
    if width is not None and width - sum(widths) - 3 * len(_GAP) < min(label, _MIN_LABEL_COLUMN):
        return _stacked_map(movements, widths)
    table = Table(title=MAP_TITLE, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("movement", overflow="fold", ratio=1, min_width=16)
    for column in MAP_COLUMNS:
        table.add_column(column, no_wrap=True)
    for short, bs in movements:
        for i, band in enumerate(bs):
            table.add_row(short if i == 0 else "", *band)
    return table


def _stacked_map(movements: list[tuple[str, list[tuple[str, str, str]]]], widths: list[int]) -> Group:
    def line(cells: tuple[str, ...]) -> str:
        return _GAP + _GAP.join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out: list[Any] = [Text(MAP_TITLE), Text(line(MAP_COLUMNS), style="bold"),
                      Text(len(_GAP) * " " + "─" * (sum(widths) + 2 * len(_GAP)))]
    for short, bs in movements:
        out.append(Text(short, style="bold"))
        out += [Text(line(band)) for band in bs]
    return Group(*out)


def findings_lines(answers: dict[str, Any], most: int = TERMINAL_FINDINGS) -> list[str]:
    found = answers.get("findings") or []
    lines = [f"{i}. {f['text']}" for i, f in enumerate(found[:most], 1)]
    if len(found) > most:
        lines.append(f"… {len(found) - most} more in report.html")
    return lines


def tuning_table(answers: dict[str, Any], most: int = TERMINAL_TUNING) -> list[Any]:
    """A --tune or --sweep-env run's answer (commatlas.analysis.tuning), as the terminal shows it: a
    line that says what was swept and against what, then a row per setting that won, broke or
    slowed something, then the ranges where none won; [] for a run that swept nothing. Its question
    is which setting, so the terminal says that before the map. The variant words every row shares
    (cpu_numa=0 ...) are said once, in the head."""
    tuning = answers.get("tuning") or {}
    variables = tuning.get("variables") or {}
    if not variables:
        return []
    swept = "; ".join(f"{name}, {len(values)} settings" for name, values in variables.items())
    head = f"Tuning ({swept}): each gain is over {tuning.get('baseline', 'the baseline')}."
    if tuning.get("caveat"):
        head += " " + tuning["caveat"]
    one_variable = next(iter(variables)) if len(variables) == 1 else None

    def setting(entry: dict[str, Any]) -> str:
        chosen = entry.get("setting") or {}
        if not chosen:
            return "the default"
        return ", ".join(v if k == one_variable else f"{k}={v}" for k, v in chosen.items())

    def sizes(entry: dict[str, Any]) -> str:
        if entry.get("min_bytes") is not None:
            low, high = entry["min_bytes"], entry["max_bytes"]
            return format_size(low) if low == high else f"{format_size(low)}–{format_size(high)}"
        return ", ".join(format_size(n) for n in sorted(entry.get("sizes") or [])) or "every size"

    won = [a for a in tuning.get("answers") or [] if a.get("setting")]
    none = [a for a in tuning.get("answers") or [] if not a.get("setting")]
    rows = ([(a, f"{a['gain']:.2f}× faster", None) for a in won]
            + [(b, "broke (report.html says why)", "red") for b in tuning.get("broke") or []]
            + [(x, f"{1 / x['gain']:.2f}× slower", "red") for x in tuning.get("slowed") or []]
            + [(a, "none beat the default", "dim") for a in none])
    # A setting that left no record at all broke its whole pass: that entry names no movement.
    labels = [str(e.get("movement") or e.get("benchmark") or "") for e, _, _ in rows]
    named = [label for label in labels if label]
    shared = set.intersection(*(set(label.split()[1:]) for label in named)) if named else set()
    title = head + (" Every row: " + " ".join(w for w in named[0].split()[1:] if w in shared) + "." if shared else "")
    # An entry a row: the verdict, then what and where, and the setting on a line of its own. A
    # setting is one long word (glibc.cpu.x86_non_temporal_threshold=0x100000): in a column of its
    # own at 80 columns it was cut mid-word. The head is a line of its own, not the table's title:
    # a title wraps at the table's width, which a one-row table keeps narrow.
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column("against the default", no_wrap=True)
    table.add_column("what and setting", overflow="fold", ratio=1)
    for (entry, verdict, style), label in list(zip(rows, labels))[:most]:
        what = (" ".join(w for w in label.split() if w not in shared) or label) + f" at {sizes(entry)}" if label \
            else "the whole run"
        chosen = f"\n{setting(entry)}" if entry.get("setting") else ""
        table.add_row(verdict, what + chosen, style=style)
    out: list[Any] = [title, table]
    if len(rows) > most:
        out.append(f"… {len(rows) - most} more rows in report.html")
    left_out = len(tuning.get("left_out") or [])
    if left_out:
        out.append(f"{left_out} point(s) not judged: they did not repeat, or the host got in the way (report.html "
                   "lists them)")
    return out


def osu_table(records: list[dict[str, Any]]) -> Table | None:
    """The engine's MPI figures (host buffers, and GPU-aware device buffers) beside the OSU-method
    reference run in its own process."""
    rows = comparison_rows(records)
    if not rows:
        return None
    verdicts = [r.verdict for r in rows]
    kinds = {v.kind for v in verdicts}
    caption = "; ".join(meaning for kind, meaning in MEANING.items() if kind in kinds) or None
    table = Table(title="Engine vs OSU method (commatlas-osu-ref, medians over passes)", title_justify="left",
                  caption=caption, caption_justify="left")
    table.add_column("benchmark", no_wrap=True)
    for column in ("size", "engine", "OSU", "ratio", "verdict"):
        table.add_column(column, overflow="fold")
    several_libraries = len({r.library for r in rows}) > 1
    for r, verdict in zip(rows, verdicts):
        table.add_row(r.benchmark + (f" ({r.library})" if several_libraries else ""), format_size(r.bytes),
                      r.engine_text, r.reference_text, format_ratio(r.ratio), verdict.short,
                      style="red" if verdict.differs else None)
    return table


def skips_table(records: list[dict[str, Any]]) -> Table | None:
    """One row per reason, with the benchmarks it stopped: a one-GPU machine skips dozens of
    benchmarks for the same two or three reasons, and a row each repeated them."""
    # Where in the engine's sources a reason was raised is for its developers (engine.log has it).
    points = Counter((short_reason(r.get("reason", "")), r["benchmark"]) for r in records if r.get("type") == "skip")
    if not points:
        return None
    by_reason: dict[str, list[str]] = {}
    for reason, key in sorted(points):
        by_reason.setdefault(reason, []).append(key)
    table = Table(title="Skipped", title_justify="left")
    table.add_column("benchmarks", overflow="fold", ratio=1)
    table.add_column("points", justify="right")
    table.add_column("reason", overflow="fold", ratio=1)
    for reason, keys in sorted(by_reason.items(), key=lambda kv: kv[1][0]):
        table.add_row(", ".join(keys), str(sum(points[reason, k] for k in keys)), reason)
    return table


def errors_table(run: Run) -> Table | None:
    """One row per benchmark, variant and message, with its sizes, as the report has it: a variant
    whose wire check failed leaves its other sizes "not measured", and a row each repeated the cause.
    The variant goes under the benchmark's name, its parameters apart by spaces, so that at 80
    columns the message keeps the width and names fold between parameters, not inside them."""
    rows = not_measured(run.failures, lambda f: f.message,
                        variant=lambda f: " ".join(f"{k}={v}" for k, v in f.params.items()))
    if not rows:
        return None
    table = Table(title="Errors", title_justify="left", title_style="bold red")
    table.add_column("benchmark, variant", overflow="fold", ratio=1)
    table.add_column("sizes", overflow="fold")
    table.add_column("message", overflow="fold", ratio=2)
    for r in rows:
        table.add_row(r.benchmark + (f"\n{r.variant}" if r.variant else ""), r.sizes, r.reason)
    return table


def summary_width(console: Console) -> int | None:
    """The terminal's width; NO_TERMINAL_WIDTH without a terminal, unless COLUMNS says otherwise."""
    if console.is_terminal or os.environ.get("COLUMNS") or getattr(console, "_width", None):
        return None  # a terminal, or a width someone chose
    return NO_TERMINAL_WIDTH


def print_summary(console: Console, records: list[dict[str, Any]]) -> None:
    parts: list[Any] = []
    try:
        run = run_from_records(records)
    except ResultsError as e:
        console.print(f"commatlas: warning: no summary: {e}")
        return
    answers = compute_answers(run)
    width = summary_width(console)
    parts += tuning_table(answers)
    table = map_table(answers, width or console.width)
    if table is not None:
        parts.append(table)
        peak_line = host_memory_peak_line(run)
        if peak_line:
            parts.append(peak_line)
        note = launch_note(answers)
        if note:
            parts.append(note)
    if run.undeclared:
        parts.append(f"{run.undeclared} result(s) declare no movement (written before the engine declared "
                     "movements): they are not in the map.")
    if table is None and run.results and not run.undeclared:
        # Only the harness measured itself (nothing moved between places): say so rather than nothing.
        parts.append(f"No map: none of the {len(run.results)} result(s) moves bytes between places "
                     "(the harness timing itself).")
    lines = findings_lines(answers)
    if lines:
        parts.append("Findings")
        parts += lines
    parts += [matrix_table(m) for m in pair_matrices(records)]
    check = harness_check(run).summary_line()  # evidence about the tool, below the answers
    if check:
        parts.append(check)
    parts += [t for t in (osu_table(records), skips_table(records), errors_table(run)) if t is not None]
    if not parts:
        return
    if width is None:
        console.print(Group(*parts))
        return
    before = console.size
    console.width = width  # rich caps print(width=...) at the console's own width (80 without a terminal)
    try:
        console.print(Group(*parts))
    finally:
        console.size = before
