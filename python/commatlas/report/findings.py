"""Effects read off the data, one sentence each with its numbers and a link to its plot.

Each detector looks for the series it needs and says nothing when they are absent: a finding
is never a default sentence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commatlas.report.bestmap import PathMap, value_of
from commatlas.report.figures import group_label, plot_anchor
from commatlas.report.paths import path_of
from commatlas.units import format_percent, format_ratio, format_size, format_value
from commatlas.report.variability import Flag
from commatlas.results import Result, Series

SLOW_HOST_MEMORY = ("pageable", "malloc")
FAST_HOST_MEMORY = ("pinned", "registered", "host_pinned")
REFERENCE_SIZE = 256 * 1024 * 1024  # where the brief compares thread counts, when measured
MIN_EFFECT = 1.2  # allocator effects smaller than this are left to the plots


@dataclass(frozen=True)
class Finding:
    text: str
    anchor: str


def find_effects(series: list[Series], maps: list[PathMap], flags: list[Flag]) -> list[Finding]:
    out: list[Finding] = []
    out += _crossovers(maps)
    out += _peak_fractions(series)
    out += _one_parameter_effects(series)
    out += _references(series)
    out += _distributions(series, flags)
    return out


def _span(values: list[float], fmt) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def _placements(n: int, of: int) -> str:
    return "" if of == 1 else f" on {n} of {of} placements"


def _crossovers(maps: list[PathMap]) -> list[Finding]:
    """Placements of one kind (every GPU pair, say) crossing the same way make one sentence."""
    per_group: dict[str, int] = {}
    crossings: dict[tuple[str, str, str], list[tuple[PathMap, object]]] = {}
    for m in maps:
        anchor = plot_anchor(m.path)
        per_group[anchor] = per_group.get(anchor, 0) + 1
        for c in m.crossovers:
            crossings.setdefault((anchor, c.below, c.above), []).append((m, c))
    out = []
    for (anchor, below, above), found in crossings.items():
        m0, c0 = found[0]
        at = [c.at for _, c in found if math.isfinite(c.at)]
        where = f"≈{_span(at, format_size)}" if at else f"{format_size(c0.between[1])}"
        lows = sorted({c.between[0] for _, c in found})
        highs = sorted({c.between[1] for _, c in found})
        under = [s.margin for m, c in found for s in m.standings if s.size <= c.between[0] and s.winner == below]
        over = [s.margin for m, c in found for s in m.standings if s.size >= c.between[1] and s.winner == above]
        text = (f"{m0.path.category} ({group_label(m0.path)}): {below} beats {above} below {where}"
                f"{_placements(len({id(m) for m, _ in found}), per_group[anchor])} (crossover between {_span(lows, format_size)} and "
                f"{_span(highs, format_size)})")
        if under:
            text += f", by up to {format_ratio(max(under))}"
        if over:
            text += f"; above it {above} wins by up to {format_ratio(max(over))}"
        out.append(Finding(text + ".", anchor))
    return out


def _peak_fractions(series: list[Series]) -> list[Finding]:
    """Per plot group and interface: the fraction of the path's peak reached at the largest sizes."""
    groups: dict[str, dict[str, list[tuple[float, float, Result]]]] = {}
    paths: dict[str, tuple] = {}
    for s in series:
        if s.first.metric != "bandwidth":
            continue
        fractions = [(p.peak.fraction, p) for p in s.points if p.peak and math.isfinite(p.peak.fraction)]
        if not fractions:
            continue
        path = path_of(s)
        anchor = plot_anchor(path)
        paths.setdefault(anchor, (path, set()))[1].add(path)
        top = sorted(fractions, key=lambda fp: fp[1].bytes or 0)[-3:]  # the plateau: the largest sizes
        best = max(fractions, key=lambda fp: fp[0])
        groups.setdefault(anchor, {}).setdefault(f"{s.first.interface} [{s.benchmark}]", []).append(
            (float(np.median([f for f, _ in top])), best[0], best[1]))
    out = []
    for anchor, contenders in sorted(groups.items()):
        path, members = paths[anchor]
        parts = []
        for name, found in contenders.items():
            plateau = [p for p, _, _ in found]
            _, best, at = max(found, key=lambda x: x[1])
            over = f" over {len(found)} placements" if len(found) > 1 else ""
            parts.append(f"{name} plateaus at {_span(plateau, format_percent)} of peak{over} "
                         f"(best {format_percent(best)} at {format_size(at.bytes)})")
        peak = next(iter(contenders.values()))[0][2].peak
        out.append(Finding(f"{path.category} ({group_label(path)}), peak {peak.gbps:.4g} GB/s ({peak.source}): "
                           + "; ".join(parts) + ".", anchor))
    return out


@dataclass(frozen=True)
class _Effect:
    """One pair of series differing in one parameter, measured at one common size."""

    series: Series
    factor: float  # how many times better `better` is than `worse`
    better: Result
    worse: Result


def _one_parameter_effects(series: list[Series]) -> list[Finding]:
    """Series of one benchmark that differ in exactly one parameter: thread count (against
    1 thread) or allocator. Placements of one kind (every GPU, say) make one sentence."""
    effects: dict[tuple, list[_Effect]] = {}
    for key, a, b in _pairs_differing_in_one(series):
        e = _thread_effect(a, b) if key == "threads" else _allocator_effect(a, b)
        if e:
            effects.setdefault((plot_anchor(path_of(a)) if key == "threads" else a.benchmark, key,
                                str(e.better.params[key]), str(e.worse.params[key])), []).append(e)
    out = []
    for (_, key, good, bad), found in effects.items():
        e = max(found, key=lambda x: x.factor)
        factors = [x.factor for x in found]
        where = "" if len(found) == 1 else f" over {len(found)} placements (numbers: the largest gap)"
        named = "{} thread{}" if key == "threads" else key + "={}{}"
        at = (f"{format_size(e.better.bytes)} ({named.format(good, 's' if key == 'threads' else '')}: "
              f"{format_value(value_of(e.better), e.better.metric)}, {named.format(bad, '')}: "
              f"{format_value(value_of(e.worse), e.worse.metric)})")
        if key == "threads" and e.factor >= 1:
            text = f"{e.series.benchmark} with {good} threads is {_span(factors, format_ratio)} faster than with 1 thread at {at}{where}."
        elif key == "threads":  # more threads lost everywhere (a busy or small machine): say so plainly
            slower = [1 / f for f in factors]
            text = f"{e.series.benchmark} with {good} threads is {_span(slower, format_ratio)} slower than with 1 thread at {at}{where}."
        else:
            note = " (pageable host memory is the slow kind, as expected)" if (
                any(w in bad for w in SLOW_HOST_MEMORY) and any(w in good for w in FAST_HOST_MEMORY)) else ""
            text = f"{e.series.benchmark}: {key}={bad} is {_span(factors, format_ratio)} slower than {key}={good} at {at}{where}{note}."
        out.append(Finding(text, plot_anchor(path_of(e.series))))
    return out


def _pairs_differing_in_one(series: list[Series]):
    """(key, a, b) for series of one benchmark whose parameters differ only in `key`, a thread
    count or an allocator; bucketed by the other parameters, so the cost stays linear."""
    keys = {k for s in series for k, _ in s.key[1] if k == "threads" or "alloc" in k or "memory" in k}
    for key in sorted(keys):
        buckets: dict[tuple, list[Series]] = {}
        for s in series:
            params = dict(s.key[1])
            if key in params:
                rest = tuple((k, v) for k, v in s.key[1] if k != key)
                buckets.setdefault((s.benchmark, s.ranks, rest), []).append(s)
        for group in buckets.values():
            for i, a in enumerate(group):
                for b in group[i + 1:]:
                    yield key, a, b


def _common_size(a: Series, b: Series, preferred: int | None = None) -> tuple[Result, Result] | None:
    pa = {p.bytes: p for p in a.points}
    pb = {p.bytes: p for p in b.points}
    common = sorted(set(pa) & set(pb) - {None})
    if not common:
        return None
    size = preferred if preferred in common else common[-1]
    return pa[size], pb[size]


def _times_better(x: Result, y: Result) -> float:
    """How many times better x is than y (higher bandwidth, or lower latency)."""
    vx, vy = value_of(x), value_of(y)
    if vx <= 0 or vy <= 0:
        return math.nan
    return vx / vy if x.metric == "bandwidth" else vy / vx


def _thread_effect(a: Series, b: Series) -> _Effect | None:
    if "1" not in (str(a.params.get("threads")), str(b.params.get("threads"))):
        return None  # the claim is always against one thread
    one, many = (a, b) if str(a.params["threads"]) == "1" else (b, a)
    pair = _common_size(many, one, REFERENCE_SIZE)
    if not pair:
        return None
    factor = _times_better(*pair)
    return _Effect(many, factor, *pair) if math.isfinite(factor) else None


def _allocator_effect(a: Series, b: Series) -> _Effect | None:
    pair = _common_size(a, b)
    if not pair:
        return None
    factor = _times_better(*pair)
    if not math.isfinite(factor):
        return None
    if factor < 1:
        factor, pair = 1 / factor, (pair[1], pair[0])
    better_series = a if any(p is pair[0] for p in a.points) else b
    return _Effect(better_series, factor, *pair) if factor >= MIN_EFFECT else None


def _references(series: list[Series]) -> list[Finding]:
    """reference.<suite>_<name> is the bare-code twin of <suite>.<name>: the harness adds this much."""
    out = []
    index = {(s.benchmark, s.key[1], s.ranks): s for s in series}
    for s in series:
        if s.first.category != "reference":
            continue
        name = s.benchmark.split(".", 1)[-1]
        if s.benchmark == "reference.harness_overhead":
            p = s.points[0]
            out.append(Finding(f"One timed operation of the harness costs {format_value(p.latency_us, 'latency')} "
                               f"(median; {p.latency_includes or 'empty operation'}); figures near this are harness-bound.",
                               plot_anchor(path_of(s))))
            continue
        if "_" not in name:
            continue
        twin = index.get((name.replace("_", ".", 1), s.key[1], s.ranks))
        pair = twin and _common_size(twin, s, REFERENCE_SIZE)
        if not pair:
            continue
        measured, reference = pair
        gap = value_of(measured) / value_of(reference) - 1
        out.append(Finding(f"{twin.label()} reaches {format_value(value_of(measured), measured.metric)} at "
                           f"{format_size(measured.bytes)}, {abs(gap):.1%} {'above' if gap >= 0 else 'below'} its "
                           f"bare-code reference {s.benchmark} ({format_value(value_of(reference), reference.metric)}).",
                           plot_anchor(path_of(twin))))
    return out


def _distributions(series: list[Series], flags: list[Flag]) -> list[Finding]:
    by_series: dict[tuple, list[Flag]] = {}
    for f in flags:
        by_series.setdefault((f.result.benchmark, f.result.params_key, f.result.ranks, f.kind), []).append(f)
    out = []
    for (bench, params, ranks, kind), group in sorted(by_series.items(), key=lambda kv: kv[0][:3]):
        group.sort(key=lambda f: f.result.bytes or 0)
        variant = ", ".join(f"{k}={v}" for k, v in params)
        name = bench + (f" ({variant})" if variant else "")
        sizes = ", ".join(format_size(f.result.bytes) for f in group[:6]) + (" …" if len(group) > 6 else "")
        worst = max(group, key=lambda f: f.score)
        if kind == "bimodal":
            text = (f"{name} is bimodal at {len(group)} size(s) ({sizes}); at {format_size(worst.result.bytes)} the "
                    f"modes sit near {worst.modes[0] * 1e6:.3g} µs and {worst.modes[1] * 1e6:.3g} µs "
                    f"(Ashman's D = {worst.score:.1f}): its median hides two behaviours.")
        else:
            text = (f"{name} has a heavy tail at {len(group)} size(s) ({sizes}): p99 is up to "
                    f"{worst.score:.1f}× the median (at {format_size(worst.result.bytes)}).")
        out.append(Finding(text, "variability"))
    return out
