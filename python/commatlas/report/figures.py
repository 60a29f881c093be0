"""Which figures the report draws, from which series, and under which anchors."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from commatlas.report import plots
from commatlas.report.bestmap import spread_of
from commatlas.report.paths import INDEX_KEYS, PathKey, is_indexed, path_class, path_of, slug
from commatlas.units import format_size
from commatlas.report.variability import Flag
from commatlas.results import Result, Series

BOX_SERIES = 4  # distributions drawn for this many series: those whose spread says the most
BOX_SIZES = 20
MAX_CURVE_FIGURES = 6  # per category; a full node has dozens of placements × allocators × directions


@dataclass
class Figure:
    anchor: str
    title: str
    svg: plots.Drawing | str  # a Drawing until draw_all() turns it into SVG text
    caption: str = ""


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


@dataclass
class Section:
    category: str
    figures: list[Figure] = field(default_factory=list)


def group_label(path: PathKey) -> str:
    parts = [f"{k}={v}" for k, v in path_class(path)]
    if path.operation:
        parts.insert(0, path.operation)
    return ", ".join(parts) or "all series"


def plot_anchor(path: PathKey) -> str:
    return "plot-" + slug(f"{path.category}-{path.metric}-{group_label(path)}")


def curve_sections(series: list[Series]) -> list[Section]:
    groups: dict[str, list[tuple[PathKey, Series]]] = {}
    for s in series:
        p = path_of(s)
        groups.setdefault(plot_anchor(p), []).append((p, s))
    sections: dict[str, Section] = {}
    for anchor, members in sorted(groups.items()):
        path = members[0][0]
        shown, caption = _representative(members)
        collective = path.category == "collective" and path.metric == "bandwidth"
        lines = [_line(s, collective) for s in shown]
        caption += (f" {len(lines) - plots.MAX_LINES} more series not drawn (see the tables)."
                    if len(lines) > plots.MAX_LINES else "")
        ylabel = ("bus bandwidth (GB/s, nccl-tests factor)" if collective else
                  "bandwidth (GB/s, from the median)" if path.metric == "bandwidth" else "latency (µs, median)")
        title = f"{path.category} {path.metric}: {group_label(path)}"
        svg = plots.Drawing(plots.curves_svg, (lines,), dict(title=title, ylabel=ylabel, rooflines=[]
                            if path.metric != "bandwidth" or collective else _rooflines(shown)))
        section = sections.setdefault(path.category, Section(path.category))
        if len(section.figures) >= MAX_CURVE_FIGURES:
            # Kept as an anchor with its reason, so that links from findings and maps still land.
            section.figures.append(Figure(anchor, title, "", f"{title}: not drawn (at most {MAX_CURVE_FIGURES} "
                                          "plots per category keep the report readable and quick); its points are "
                                          "in the best-interface tables and in `commatlas export --csv`."))
            continue
        section.figures.append(Figure(anchor, title, svg, (caption + " Bands: p5–p95 of every sample.").strip()))
    return list(sections.values())


def _representative(members: list[tuple[PathKey, Series]]) -> tuple[list[Series], str]:
    """Pair-indexed series of every pair would bury each other: one pair is drawn, all in the matrices."""
    if not any(is_indexed(p) for p, _ in members):
        return [s for _, s in members], ""
    def indices(p: PathKey) -> tuple:
        return tuple((k, int(v)) for k, v in p.endpoints if k in INDEX_KEYS and v.lstrip("-").isdigit())
    first = min(indices(p) for p, _ in members)
    shown = [s for p, s in members if indices(p) == first]
    others = len({indices(p) for p, _ in members}) - 1
    where = ", ".join(f"{k}={v}" for k, v in first)
    return shown, (f"Drawn for {where}; {others} other placement(s) of this kind are in the pair matrices."
                   if others else "")


def _line(s: Series, busbw: bool) -> plots.Line:
    # Bus bandwidth is algbw × the collective's factor; the spread scales with it.
    factor = np.array([p.collective.bus_factor if busbw and p.collective else 1.0 for p in s.points])
    spread = np.array([spread_of(p) for p in s.points]).reshape(-1, 2) * factor[:, None]
    return plots.Line(s.label(), s.sizes, s.values() * factor, spread[:, 0], spread[:, 1])


def _rooflines(shown: list[Series]) -> list[tuple[float, str]]:
    peaks: dict[float, str] = {}
    for s in shown:
        for p in s.points:
            if p.peak and math.isfinite(p.peak.gbps) and p.peak.gbps > 0:
                peaks.setdefault(round(p.peak.gbps, 3), f"{p.peak.source} {p.peak.gbps:.4g} GB/s")
    return sorted(peaks.items())


MAX_MATRIX_FIGURES = 12
# Parameters naming a pair's source and destination (synthetic runs: src/dst; the engine: src_gpu/dst_gpu).
PAIR_KEYS = (("src", "dst"), ("src_gpu", "dst_gpu"), ("src_device", "dst_device"))
MAX_PANELS = 4  # variants per matrix figure; more make a page of numbers nobody reads


def pair_matrices(series: list[Series]) -> list[Figure]:
    """Per benchmark, one figure: a src × dst heatmap per variant, in GB/s (or µs) and % of peak,
    at the largest size every pair measured. Only real matrices (≥ 2 sources and ≥ 2 destinations)."""
    groups: dict[tuple, dict[tuple[str, str], Series]] = {}
    for s in series:
        p = s.params
        ends = next(((a, b) for a, b in PAIR_KEYS if a in p and b in p), None)
        if ends:
            rest = tuple((k, v) for k, v in s.key[1] if k not in ends)
            groups.setdefault((s.benchmark, s.ranks, rest), {})[(str(p[ends[0]]), str(p[ends[1]]))] = s
    by_benchmark: dict[tuple[str, int], list[tuple[tuple, dict]]] = {}
    for (bench, ranks, rest), cells in sorted(groups.items()):
        if len({k[0] for k in cells}) >= 2 and len({k[1] for k in cells}) >= 2:
            by_benchmark.setdefault((bench, ranks), []).append((rest, cells))
    out = []
    for (bench, ranks), variants in list(by_benchmark.items())[:MAX_MATRIX_FIGURES]:
        all_cells = [k for _, cells in variants for k in cells]
        srcs = sorted({a for a, _ in all_cells}, key=_index_order)
        dsts = sorted({b for _, b in all_cells}, key=_index_order)
        panels = []
        for rest, cells in variants[:MAX_PANELS]:
            size, value, fraction = _matrix_at_common_size(cells, srcs, dsts)
            variant = ", ".join(f"{k}={v}" for k, v in rest) or "all"
            unit = "GB/s" if next(iter(cells.values())).first.metric == "bandwidth" else "µs"
            has_peak = np.isfinite(fraction).any()
            panels.append(plots.Panel(value, f"{variant} @ {format_size(size)}", unit + (" (and % of peak)" if has_peak
                                      else ""), fraction if has_peak else None))
        title = f"{bench}" + (f" ({ranks} ranks)" if ranks > 1 else "") + ": every src → dst pair"
        svg = plots.Drawing(plots.heatmaps_svg, (panels, srcs, dsts), dict(title=title))
        more = f" {len(variants) - MAX_PANELS} more variant(s) not drawn." if len(variants) > MAX_PANELS else ""
        out.append(Figure("matrix-" + slug(f"{bench}-{ranks}"), title, svg,
                          "Each panel at the largest size every pair of that variant measured." + more))
    left = len(by_benchmark) - MAX_MATRIX_FIGURES
    if left > 0:
        out[-1].caption += f" {left} more benchmark(s) with pair matrices are not drawn; their points are in the tables and the CSV export."
    return out


def _index_order(v: str) -> tuple:
    return (0, int(v), "") if v.lstrip("-").isdigit() else (1, 0, v)


def _matrix_at_common_size(cells: dict[tuple[str, str], Series], srcs: list[str], dsts: list[str]):
    sizes = [set(p.bytes for p in s.points) - {None} for s in cells.values()]
    common = set.intersection(*sizes)
    size = max(common) if common else max(max(x, default=0) for x in sizes)
    value = np.full((len(srcs), len(dsts)), np.nan)
    fraction = np.full_like(value, np.nan)
    for (a, b), s in cells.items():
        r = next((p for p in s.points if p.bytes == size), None)
        if r is not None:
            i, j = srcs.index(a), dsts.index(b)
            value[i, j] = r.bandwidth_gbps if r.metric == "bandwidth" else r.latency_us
            if r.peak and math.isfinite(r.peak.fraction):
                fraction[i, j] = 100 * r.peak.fraction
    return size, value, fraction


def distribution_figures(series: list[Series], flags: list[Flag]) -> list[Figure]:
    flagged: dict[tuple, int] = {}
    for f in flags:
        k = (f.result.benchmark, f.result.params_key, f.result.ranks)
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
