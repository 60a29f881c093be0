"""Figures as inline SVG text (matplotlib, Agg backend, no pyplot state)."""
from __future__ import annotations

import io
import textwrap
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import cycle
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402

import numpy as np  # noqa: E402

from commatlas.units import format_size  # noqa: E402

# Text stays text (not glyph outlines): smaller files, and the words can be searched in the page.
_RC = {"svg.fonttype": "none", "svg.hashsalt": "commatlas", "font.size": 9, "axes.titlesize": 10}
MAX_LINES = 16  # more lines than this on one plot cannot be told apart
MAX_LABEL = 48  # characters per legend line
PARALLEL_FROM = 6  # figures; below this, starting worker processes costs more than it saves
# A figure takes about 0.1 s of one core; a run on 2x H100 draws about 45 (8 workers: 6 rounds)
# once the measuring is over and the machine's 32 vCPUs are idle. Forked workers share the
# parent's pages.
MAX_WORKERS = 16


@dataclass(frozen=True)
class Drawing:
    """A figure to draw: a function of this module and its arguments (picklable, so that
    figures can be drawn in worker processes; matplotlib is single-threaded)."""

    function: Callable[..., str]
    args: tuple
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> str:
        return self.function(*self.args, **self.kwargs)


def _draw_one(drawing: Drawing) -> str:
    return drawing()


def draw(drawings: list[Drawing]) -> list[str]:
    return start_drawing(drawings)()


def start_drawing(drawings: list[Drawing]) -> Callable[[], list[str]]:
    """Starts drawing in worker processes and returns the call that waits for the SVG texts, so
    that the caller's own work (findings, tables) runs while the figures are drawn."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(cpus, MAX_WORKERS)
    if len(drawings) < PARALLEL_FROM or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return lambda: [d() for d in drawings]
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        futures = [pool.submit(_draw_one, d) for d in drawings]
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise

    def finish() -> list[str]:
        try:
            return [f.result() for f in futures]
        finally:
            pool.shutdown(cancel_futures=True)
    return finish


@dataclass(frozen=True)
class Line:
    label: str
    sizes: np.ndarray
    values: np.ndarray
    low: np.ndarray | None = None  # spread band (p5–p95), same unit as values
    high: np.ndarray | None = None
    cache: np.ndarray | None = None  # True where the point is cache-resident (drawn hollow)


def _to_svg(fig: Figure, tight: bool = True) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, metadata={"Date": None})
    text = buf.getvalue()
    return text[text.find("<svg"):]


def _size_axis(ax) -> None:
    ax.set_xscale("log", base=2)
    # Tick layout dominates drawing time: ~10 labelled sizes and no minor ticks are enough to read.
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=10))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_size(v)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("message size")


def _log_value_axis(ax) -> None:
    # Plain-text tick labels: matplotlib's default log labels go through its mathtext parser,
    # which costs more than drawing the whole figure.
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


def time_unit(values_us: np.ndarray) -> tuple[float, str]:
    """The unit a time axis reads best in, from its data: a chase of 2-200 ns in ns rather than
    0.001-0.2 µs, a 30 ms allreduce in ms. Returns the factor from µs and the unit's name."""
    finite = values_us[np.isfinite(values_us) & (values_us > 0)] if values_us.size else values_us
    top = float(np.max(finite)) if finite.size else 1.0
    if top < 1:
        return 1e3, "ns"
    if top >= 1e4:
        return 1e-3, "ms"
    return 1.0, "µs"


def _titled(ax, title: str, width: int) -> int:
    """Sets the title wrapped to `width` characters (a fixed layout would cut a long one at both
    ends); returns its number of lines."""
    text = textwrap.fill(title, width)
    # At the axes' top, where matplotlib puts it anyway (nothing is drawn above these axes): told
    # so, it skips searching for what the title must clear, which lays out every y tick label once
    # more.
    ax.set_title(text, y=1.0)
    return text.count("\n") + 1


def _readable_ticks(ax, values: np.ndarray) -> None:
    """A log axis labels only powers of ten: data within one decade (a one-point plot) would show
    no number at all. Such an axis gets 1-2-5 (or finer) ticks and room around its values."""
    finite = values[np.isfinite(values) & (values > 0)]
    if not finite.size:
        return
    lo, hi = float(finite.min()), float(finite.max())
    if hi / lo >= 10:
        return
    ax.set_ylim(lo / 1.6, hi * 1.6)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if hi / lo >= 2.5 else
                                          (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)))


def curves_svg(lines: list[Line], *, title: str, ylabel: str,
               rooflines: list[tuple[float, str]] = ()) -> str:
    with matplotlib.rc_context(_RC):
        # A fixed layout with the legend in a right-hand margin: a "tight" box would draw it twice.
        # One line needs no legend (the title names it), and takes the margin for the plot.
        legend = len(lines) > 1
        fig = Figure(figsize=(11, 4.4))
        fig.subplots_adjust(left=0.07, right=0.58 if legend else 0.97, bottom=0.13, top=0.92)
        ax = fig.add_subplot()
        styles = cycle([(c, ls) for ls in ("-", "--", ":") for c in matplotlib.colormaps["tab10"].colors])
        for line in lines[:MAX_LINES]:
            color, ls = next(styles)
            ok = np.isfinite(line.values) & (line.values > 0) & (line.sizes > 0)
            label = textwrap.fill(line.label, MAX_LABEL)  # wrapped, never cut: the end may be what differs
            ax.plot(line.sizes[ok], line.values[ok], ls, color=color, marker=".", markersize=3, lw=1.2, label=label)
            if line.cache is not None and (ok & line.cache).any():
                hollow = ok & line.cache
                ax.plot(line.sizes[hollow], line.values[hollow], "o", markersize=5, markerfacecolor="white",
                        markeredgecolor=color, lw=0)
            if line.low is not None and line.high is not None:
                band = ok & np.isfinite(line.low) & np.isfinite(line.high)
                ax.fill_between(line.sizes[band], line.low[band], line.high[band], color=color, alpha=0.18, lw=0)
        for gbps, label in rooflines:
            ax.axhline(gbps, color="black", lw=0.9, ls="-.")
            ax.annotate(f"peak {label}", (0.01, gbps), xycoords=("axes fraction", "data"), va="bottom", fontsize=7)
        _size_axis(ax)
        _log_value_axis(ax)
        drawn = [line.values[np.isfinite(line.values)] for line in lines[:MAX_LINES]]
        _readable_ticks(ax, np.concatenate(drawn + [np.array([g for g, _ in rooflines])]) if drawn else np.array([]))
        ax.set_ylabel(ylabel)
        title_lines = _titled(ax, title, 75 if legend else 140)
        fig.subplots_adjust(top=0.92 - 0.05 * (title_lines - 1))
        ax.grid(True, which="major", alpha=0.3)
        if legend:
            ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return _to_svg(fig, tight=False)


def boxes_svg(sizes: list[float], samples_us: list[np.ndarray], *, title: str) -> str:
    """Box plots drawn as five artists in all (whiskers, boxes, medians, fliers), not six per
    box as Axes.boxplot makes: artists, not samples, set the drawing time."""
    # The unit from the medians: a few outliers 1000x slower must not put a 5 ns box in µs.
    factor, unit = time_unit(np.array([np.median(s) for s in samples_us if len(s)]))
    samples_us = [np.asarray(s) * factor for s in samples_us]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(7.5, 3.2))
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.3, top=0.9)
        ax = fig.add_subplot()
        x = np.arange(1, len(sizes) + 1)
        q = np.array([np.percentile(s, (5, 25, 50, 75, 95)) for s in samples_us]).reshape(-1, 5)
        ax.vlines(x, q[:, 0], q[:, 4], color="black", lw=0.8)
        ax.bar(x, q[:, 3] - q[:, 1], bottom=q[:, 1], width=0.5, color="white", edgecolor="black", lw=0.8, zorder=2)
        ax.hlines(q[:, 2], x - 0.25, x + 0.25, color="tab:red", lw=1.2, zorder=3)
        fx = [np.full(np.count_nonzero(out), i) for i, (s, (lo, hi)) in enumerate(zip(samples_us, q[:, [0, 4]]), 1)
              for out in [(s < lo) | (s > hi)]]
        fy = [s[(s < lo) | (s > hi)] for s, (lo, hi) in zip(samples_us, q[:, [0, 4]])]
        if fx:
            ax.plot(np.concatenate(fx), np.concatenate(fy), "o", markersize=2, alpha=0.4, color="black")
        ax.set_xticks(x, [format_size(s) for s in sizes], rotation=45, fontsize=7)
        ax.set_xlim(0.4, len(sizes) + 0.6)
        _log_value_axis(ax)
        _readable_ticks(ax, q.ravel())
        ax.set_ylabel(f"time per operation ({unit})")
        ax.set_xlabel("message size (whiskers p5–p95, dots beyond)")
        title_lines = _titled(ax, title, 85)
        fig.subplots_adjust(top=0.9 - 0.07 * (title_lines - 1))
        ax.grid(True, axis="y", alpha=0.3)
        return _to_svg(fig, tight=False)


@dataclass(frozen=True)
class Panel:
    matrix: np.ndarray
    title: str
    unit: str
    fraction: np.ndarray | None = None  # of the path's peak, written under each value


def heatmaps_svg(panels: list[Panel], rows: list[str], cols: list[str], *, title: str) -> str:
    """One figure of src × dst heatmaps, two panels a row; cells read "value" and "% of peak"."""
    with matplotlib.rc_context(_RC):
        ncols = min(2, len(panels))
        nrows = (len(panels) + ncols - 1) // ncols
        cell_w, cell_h = 0.62, 0.42
        panel_w, panel_h = 1.3 + cell_w * len(cols), 1.1 + cell_h * len(rows)
        fig = Figure(figsize=(ncols * panel_w, nrows * panel_h + 0.5))
        # Fixed margins (a "tight" box would draw the figure twice, and these figures are many).
        fig.subplots_adjust(left=0.9 / (ncols * panel_w), right=0.97, bottom=0.7 / (nrows * panel_h + 0.5),
                            top=1 - 0.75 / (nrows * panel_h + 0.5), wspace=0.45, hspace=0.55)
        for k, panel in enumerate(panels):
            ax = fig.add_subplot(nrows, ncols, k + 1)
            # No colour bar: every cell is labelled with its value, and a bar is a second axes to draw.
            ax.imshow(np.ma.masked_invalid(panel.matrix), cmap="viridis", aspect="auto")
            ax.set_xticks(range(len(cols)), cols)
            ax.set_yticks(range(len(rows)), rows)
            ax.set_xlabel("dst")
            ax.set_ylabel("src")
            ax.set_title(f"{panel.title} ({panel.unit})", fontsize=8)
            top = np.nanmax(panel.matrix) if np.isfinite(panel.matrix).any() else 0
            for (i, j), v in np.ndenumerate(panel.matrix):
                if np.isfinite(v):
                    text = f"{v:.3g}"
                    if panel.fraction is not None and np.isfinite(panel.fraction[i, j]):
                        text += f"\n{panel.fraction[i, j]:.0f}%"
                    ax.text(j, i, text, ha="center", va="center", fontsize=6,
                            color="black" if v > 0.6 * top else "white")
        fig.suptitle(title, fontsize=10)
        return _to_svg(fig, tight=False)
