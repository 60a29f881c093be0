"""What `commatlas compare` shows: the comparison on the terminal (machine first, then the points
that changed and the winners) and as one HTML page (templates/compare.html.j2)."""
from __future__ import annotations

import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

from commatlas.analysis.compare import TOO_WIDE_WORDS, PointDelta, RunComparison
from commatlas.io.outputs import write_text
from commatlas.report.templating import render
from commatlas.units import format_ratio, format_size, format_value

TERMINAL_ROWS = 40
# Below this width the points are listed one entry each (ratio, then what moved, its variant and
# the verdict on lines of their own): seven columns at 80 cut benchmark names mid-word and took
# 8-12 lines a point.
TABLE_MIN_COLUMNS = 120
HTML_ALL_ROWS = 3000  # above this, the HTML lists only the points that changed
HTML_NAME = "compare.html"


def headline(c: RunComparison) -> str:
    n = len(c.points)
    text = f"{len(c.different)} of {n} common points changed beyond run-to-run variation"
    if c.unstable:
        wide = sum(1 for p in c.unstable if TOO_WIDE_WORDS in p.verdict.why)
        parts = [f"{len(c.unstable) - wide} unstable in a run"] if len(c.unstable) > wide else []
        parts += [f"{wide} where the runs vary by more than ±5x"] if wide else []
        text += f"; not judged: {', '.join(parts)}"
    return text


def print_comparison(comparisons: list[RunComparison], console: Console) -> None:
    for c in comparisons:
        console.rule(f"{c.base.directory} → {c.other.directory}")
        if c.meta_diffs:
            meta = Table(title="metadata differences", title_justify="left")
            for col in ("field", "baseline", "other"):
                meta.add_column(col, overflow="fold")
            for k, a, b in c.meta_diffs:
                meta.add_row(k, a, b)
            console.print(meta)
        else:
            console.print("metadata: no difference in versions, host, GPUs, environment, options")
        if c.settings:
            console.print("matched across run settings: " + "; ".join(c.settings))
        console.print(f"rule: {c.rule.text}")
        rows = sorted(c.points, key=lambda p: (not p.verdict.different, not p.verdict.unstable,
                                               -abs(math.log(p.improvement)) if p.improvement > 0 else 0))
        console.print(points_table(c, rows[:TERMINAL_ROWS], narrow=console.width < TABLE_MIN_COLUMNS))
        if c.tail_note:
            console.print(c.tail_note)
        if c.whole_benchmark_note:
            console.print(c.whole_benchmark_note)
        if c.witness_note:
            console.print(c.witness_note)
        if len(rows) > TERMINAL_ROWS:
            console.print(f"… {len(rows) - TERMINAL_ROWS} more rows in the HTML file")
        if c.only_base or c.only_other:
            console.print(f"points only in the baseline: {c.only_base}; only in the other run: {c.only_other}")
        print_winners(c, console)


def points_table(c: RunComparison, rows: list[PointDelta], narrow: bool) -> Table:
    """The points, a row each: in seven columns, or `narrow`, the ratio beside one cell that says
    what moved (benchmark, size, both figures), its variant and the verdict on lines of their own."""
    if narrow:
        table = Table(title=headline(c), title_justify="left", box=None, show_header=False, padding=(0, 1, 1, 0),
                      expand=True)
        table.add_column("ratio", justify="right", no_wrap=True)
        table.add_column("point", overflow="fold")
    else:
        table = Table(title=headline(c), title_justify="left")
        for col in ("benchmark", "variant", "size", "baseline", "other", "ratio", "verdict"):
            table.add_column(col, overflow="fold")
    for p in rows:
        style = (("green" if p.improvement > 1 else "red") if p.verdict.different
                 else "yellow" if p.verdict.unstable else "dim")
        verdict = (("better: " if p.improvement > 1 else "worse: ") + p.verdict.why
                   if p.verdict.different else p.verdict.why)
        size, base, other = format_size(p.size), format_value(p.base, p.metric), format_value(p.other, p.metric)
        if narrow:
            lines = [f"{p.benchmark}, {size}: {base} → {other}", p.variant, verdict]
            table.add_row(format_ratio(p.ratio), "\n".join(x for x in lines if x not in ("", "-")), style=style)
        else:
            table.add_row(p.benchmark, p.variant, size, base, other, format_ratio(p.ratio), verdict, style=style)
    return table


def print_winners(c: RunComparison, console: Console) -> None:
    if c.winners_note:
        console.print(c.winners_note)
        return
    real = [w for w in c.winners if w.beyond_noise]
    console.print(f"winners: {len(real)} of the fastest ways changed beyond the noise"
                  + (f" ({len(c.winners) - len(real)} more swapped places within it)" if len(c.winners) > len(real) else ""))
    for w in real:
        console.print(f"  {w.movement}, {w.bin}: {w.base} → {w.other} ({w.why})")


def default_html_path(comparisons: list[RunComparison]) -> Path:
    """Next to the runs: in the directory of the last run compared."""
    return comparisons[-1].other.directory / HTML_NAME


def write_comparison_html(comparisons: list[RunComparison], out: str | Path | None = None) -> Path:
    path = Path(out) if out is not None else default_html_path(comparisons)
    write_text(path, render("compare.html.j2", dict(comparisons=comparisons, all_rows=HTML_ALL_ROWS,
                                                    headline=headline)))
    return path
