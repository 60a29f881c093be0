"""Which figures the report draws, from which series, and under which anchors."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from commatlas.analysis.answers import MovementData
from commatlas.analysis.findings import anchor_of, mechanism_name, slug
from commatlas.analysis.ranking import Contender, spread_of, value_of
from commatlas.io.points import series_key
from commatlas.io.results import Result, Series
from commatlas.report import plots
from commatlas.report.bestmap import MapRow
from commatlas.report.variability import Flag
from commatlas.units import format_size

BOX_SERIES = 4  # distributions drawn for this many series: those whose spread says the most
BOX_SIZES = 20
MAX_CURVE_FIGURES = 6  # per category; a full node has dozens of placements × allocators × directions


@dataclass
class Figure:
    anchor: str
    title: str
    svg: plots.Drawing | str  # a Drawing until draw_all() turns it into SVG text
    caption: str = ""
    aliases: list[str] = field(default_factory=list)  # more movement keys this plot stands for

    @property
    def alias_anchors(self) -> list[str]:
        return [anchor_of(k) for k in self.aliases]


def draw_all(figures: list[Figure]) -> None:
    start_drawing(figures)()


def start_drawing(figures: list[Figure]) -> Callable[[], None]:
    """Starts drawing; the returned call waits and puts each figure's SVG text in place."""
    to_draw = [f for f in figures if isinstance(f.svg, plots.Drawing)]
    pending = plots.start_drawing([f.svg for f in to_draw])

    def finish() -> None:
        for fig, svg in zip(to_draw, pending()):
            fig.svg = svg
    return finish


MAX_MOVEMENT_FIGURES = 40
MAX_UNDECLARED_FIGURES = 12


def legend_labels(descriptions: list[dict[str, str]]) -> list[str]:
    """Each series named by only what differs between the series of its plot: what they share
    is the plot's title, and a label cut to fit would hide the one word that differs. A key
    only some series have (an SM copy's kernel shape) is named only when it tells series apart."""
    keys = list(dict.fromkeys(k for d in descriptions for k in d))

    def labels(chosen: list[str]) -> list[str]:
        return [", ".join(d[k] if k in ("mechanism", "benchmark") else f"{k}={d[k]}" for k in chosen if k in d)
                or "all" for d in descriptions]
    present = [k for k in keys if len({d[k] for d in descriptions if k in d}) > 1]
    if "mechanism" in present and "benchmark" in present and \
            len({d.get("benchmark") for d in descriptions}) == len({d.get("mechanism") for d in descriptions}):
        present.remove("benchmark")  # one benchmark per mechanism: the mechanism says it
    out = labels(present)
    if len(set(out)) < len(out):
        out = labels([k for k in keys if len({d.get(k, "-") for d in descriptions}) > 1])
    return out


def _description(c: Contender) -> dict[str, str]:
    d = {"mechanism": mechanism_name(c.mechanism), "benchmark": c.benchmark}
    d.update(dict(c.choices))
    return d


def _ranked(data: MovementData) -> list[tuple[Contender, dict[int, Result]]]:
    """The best contender of each mechanism and allocator first, then the rest, by the figure at
    the largest size: the lines a plot can hold are the ones that matter."""
    def top(points: dict[int, Result]) -> float:
        r = points[max(points)]
        return value_of(r) if data.metric == "bandwidth" else -value_of(r)
    items = sorted(data.contenders.items(), key=lambda cp: -top(cp[1]))
    first, rest, seen = [], [], set()
    for c, p in items:
        (rest if (c.mechanism, c.allocator) in seen else first).append((c, p))
        seen.add((c.mechanism, c.allocator))
    return first + rest


def movement_figures(data: list[MovementData], rows: list[MapRow]) -> list[Figure]:
    by_key = {d.key.text(): d for d in data}
    out = []
    for row in rows:
        d = by_key[row.keys[0]]
        shown = _ranked(d)[:plots.MAX_LINES]
        labels = legend_labels([_description(c) for c, _ in shown])
        lines = [_line([p[s] for s in sorted(p)], label) for (c, p), label in zip(shown, labels)]
        unit = next(iter(d.contenders.values()))
        sample = unit[max(unit)]
        ylabel = ("bus bandwidth (GB/s, nccl-tests factor)" if sample.collective else "bandwidth (GB/s, median)") \
            if d.metric == "bandwidth" else "latency (µs, median)"
        if d.metric == "latency":
            lines, ylabel = _in_time_unit(lines)
        # The label already says the operation and direction in words; the metric only where it does not.
        title = d.label if d.metric in d.label else f"{d.label}: {d.metric}"
        caption = ""
        if len(d.contenders) > plots.MAX_LINES:
            caption = f"{len(d.contenders) - plots.MAX_LINES} more contenders not drawn (slowest at the largest size). "
        if row.also:
            caption += f"Drawn for {d.label}; alike: {'; '.join(row.also)}. "
        caption += _timed(d)
        caption += "Bands: p5–p95 of every sample. Hollow markers: cache-resident points (no winner)."
        if len(out) >= MAX_MOVEMENT_FIGURES:
            out.append(Figure(row.anchor, title, "", f"{title}: not drawn (at most {MAX_MOVEMENT_FIGURES} plots); "
                              "its points are in answers.json and `commatlas export --csv`.", row.keys[1:]))
            continue
        svg = plots.Drawing(plots.curves_svg, (lines,), dict(title=title, ylabel=ylabel, rooflines=[]
                            if d.metric != "bandwidth" else _rooflines([r for _, p in shown for r in p.values()])))
        out.append(Figure(row.anchor, title, svg, caption, row.keys[1:]))
    return out


def _timed(d: MovementData) -> str:
    """What one operation covers, per benchmark, where a latency row's contenders are timed
    differently (a copy with its launch and synchronisation beside a ping-pong's half round trip)."""
    if d.metric != "latency":
        return ""
    timed: dict[str, str] = {}
    for c, points in d.contenders.items():
        r = points[max(points)]
        if r.latency_includes:
            timed.setdefault(f"{mechanism_name(c.mechanism)} ({c.benchmark})", r.latency_includes)
    if len(set(timed.values())) < 2:
        return ""
    return "One operation is, per contender: " + "; ".join(f"{k}: {v}" for k, v in timed.items()) + ". "


def undeclared_figures(series: list[Series]) -> list[Figure]:
    """Records without a movement (older engines): one plot per benchmark, nothing guessed."""
    groups: dict[str, list[Series]] = {}
    for s in series:
        if s.first.movement is None:
            groups.setdefault(s.benchmark, []).append(s)
    out = []
    for bench, members in sorted(groups.items())[:MAX_UNDECLARED_FIGURES]:
        members = members[:plots.MAX_LINES]
        labels = legend_labels([{k: v for k, v in s.key[1]} | {"ranks": str(s.ranks)} for s in members])
        lines = [_line(s.points, label) for s, label in zip(members, labels)]
        metric = members[0].first.metric
        title = f"{bench} ({metric}; no movement declared)"
        ylabel = "bandwidth (GB/s, median)"
        if metric != "bandwidth":
            lines, ylabel = _in_time_unit(lines)
        svg = plots.Drawing(plots.curves_svg, (lines,), dict(title=title, ylabel=ylabel))
        out.append(Figure("undeclared-" + slug(bench), title, svg, "Bands: p5–p95 of every sample."))
    return out


def _in_time_unit(lines: list[plots.Line]) -> tuple[list[plots.Line], str]:
    """Latency lines (µs) rescaled to the unit their values read best in, and the axis label."""
    values = np.concatenate([line.values for line in lines]) if lines else np.array([])
    factor, unit = plots.time_unit(values)
    scaled = [plots.Line(line.label, line.sizes, line.values * factor,
                         None if line.low is None else line.low * factor,
                         None if line.high is None else line.high * factor, line.cache) for line in lines]
    return scaled, f"latency ({unit}, median)"


def _line(points: list[Result], label: str) -> plots.Line:
    sizes = np.array([p.bytes or 0 for p in points], dtype=float)
    values = np.array([value_of(p) for p in points])
    spread = np.array([spread_of(p) for p in points]).reshape(-1, 2)
    cache = np.array([bool(p.movement and p.movement.cache_resident) for p in points])
    return plots.Line(label, sizes, values, spread[:, 0], spread[:, 1], cache)


def _rooflines(points: list[Result]) -> list[tuple[float, str]]:
    peaks: dict[float, str] = {}
    for p in points:
        if p.peak and math.isfinite(p.peak.gbps) and p.peak.gbps > 0 and not (p.movement and p.movement.cache_resident):
            peaks.setdefault(round(p.peak.gbps, 3), f"{p.peak.gbps:.4g} GB/s")
    return sorted(peaks.items())[:3]


def distribution_figures(series: list[Series], flags: list[Flag]) -> list[Figure]:
    flagged: dict[tuple, int] = {}
    for f in flags:
        k = series_key(f.result)
        flagged[k] = flagged.get(k, 0) + 1
    def interest(s: Series) -> tuple:
        cv = max((p.stats.cv for p in s.points if math.isfinite(p.stats.cv)), default=0.0)
        return (flagged.get(s.key, 0), s.first.metric == "latency", cv)
    chosen = sorted((s for s in series if len(s.points) >= 1), key=interest, reverse=True)[:BOX_SERIES]
    out = []
    for s in chosen:
        points = _spaced(s.points, BOX_SIZES)
        samples = [_samples_us(p) for p in points]
        keep = [(p.bytes or 0, x) for p, x in zip(points, samples) if x.size]
        if not keep:
            continue
        title = f"distribution per size: {s.label()}"
        svg = plots.Drawing(plots.boxes_svg, ([k for k, _ in keep], [x for _, x in keep]), dict(title=title))
        cvs = ", ".join(f"{format_size(p.bytes)} {p.stats.cv:.2f}" for p in points if math.isfinite(p.stats.cv))
        out.append(Figure("dist-" + slug(s.label()), title, svg, f"Coefficient of variation per size: {cvs}."))
    return out


def _spaced(points: list[Result], n: int) -> list[Result]:
    if len(points) <= n:
        return points
    idx = np.unique(np.linspace(0, len(points) - 1, n).round().astype(int))
    return [points[i] for i in idx]


def _samples_us(r: Result) -> np.ndarray:
    x = r.samples
    return x[np.isfinite(x)] * 1e6
