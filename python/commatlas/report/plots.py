"""Figures as inline SVG text (matplotlib, Agg backend, no pyplot state)."""
from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import cycle

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402

import numpy as np  # noqa: E402

from commatlas.report.units import format_size  # noqa: E402

# Text stays text (not glyph outlines): smaller files, and the words can be searched in the page.
_RC = {"svg.fonttype": "none", "svg.hashsalt": "commatlas", "font.size": 9, "axes.titlesize": 10}
MAX_LINES = 16  # more lines than this on one plot cannot be told apart


@dataclass(frozen=True)
class Line:
    label: str
    sizes: np.ndarray
    values: np.ndarray
    low: np.ndarray | None = None  # spread band (p5–p95), same unit as values
    high: np.ndarray | None = None


def _to_svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
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


def curves_svg(lines: list[Line], *, title: str, ylabel: str,
               rooflines: list[tuple[float, str]] = ()) -> str:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(7.5, 4.2))
        ax = fig.add_subplot()
        styles = cycle([(c, ls) for ls in ("-", "--", ":") for c in matplotlib.colormaps["tab10"].colors])
        for line in lines[:MAX_LINES]:
            color, ls = next(styles)
            ok = np.isfinite(line.values) & (line.values > 0) & (line.sizes > 0)
            ax.plot(line.sizes[ok], line.values[ok], ls, color=color, marker=".", markersize=3, lw=1.2,
                    label=line.label)
            if line.low is not None and line.high is not None:
                band = ok & np.isfinite(line.low) & np.isfinite(line.high)
                ax.fill_between(line.sizes[band], line.low[band], line.high[band], color=color, alpha=0.18, lw=0)
        for gbps, label in rooflines:
            ax.axhline(gbps, color="black", lw=0.9, ls="-.")
            ax.annotate(f"peak {label}", (0.01, gbps), xycoords=("axes fraction", "data"), va="bottom", fontsize=7)
        _size_axis(ax)
        _log_value_axis(ax)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return _to_svg(fig)


def boxes_svg(sizes: list[float], samples_us: list[np.ndarray], *, title: str) -> str:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(7.5, 3.2))
        ax = fig.add_subplot()
        ax.boxplot(samples_us, whis=(5, 95), showfliers=True, flierprops={"markersize": 2, "alpha": 0.4},
                   medianprops={"color": "tab:red"})
        ax.set_xticks(range(1, len(sizes) + 1), [format_size(s) for s in sizes], rotation=45, fontsize=7)
        _log_value_axis(ax)
        ax.set_ylabel("time per operation (µs)")
        ax.set_xlabel("message size (whiskers p5–p95, dots beyond)")
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        return _to_svg(fig)


def heatmap_svg(matrix: np.ndarray, rows: list[str], cols: list[str], *, title: str, unit: str,
                fmt: str = "{:.3g}") -> str:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(1.6 + 0.55 * len(cols), 1.2 + 0.45 * len(rows)))
        ax = fig.add_subplot()
        masked = np.ma.masked_invalid(matrix)
        image = ax.imshow(masked, cmap="viridis", aspect="auto")
        fig.colorbar(image, ax=ax, label=unit)
        ax.set_xticks(range(len(cols)), cols)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_xlabel("dst")
        ax.set_ylabel("src")
        top = np.nanmax(matrix) if np.isfinite(matrix).any() else 0
        for (i, j), v in np.ndenumerate(matrix):
            if np.isfinite(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7,
                        color="black" if v > 0.6 * top else "white")
        ax.set_title(title)
        return _to_svg(fig)
