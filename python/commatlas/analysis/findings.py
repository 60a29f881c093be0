"""The findings: at most MAX_FINDINGS sentences read off the answers, ranked by what they change
for a user. Each names the movement, the mechanisms (or allocators), the sizes and the numbers,
in at most MAX_CHARS characters, and links to the movement's plot. A finding is never a default
sentence: each kind says nothing when the answers lack what it compares.

Kinds, in the order they rank:
- crossover: the fastest mechanism changes with size (clear wins on both sides);
- allocator: an allocator costs at least MIN_EFFECT× against the fastest one, same movement;
- ce_vs_sm, gpu_aware_vs_staged, nccl_vs_mpi: two mechanisms users choose between, where one
  of them wins everywhere (a crossover between them is already a finding);
- below_peak: the best figure of a movement at its largest size is under LOW_PEAK of its peak.
"""
from __future__ import annotations

import re
from typing import Any

from commatlas.units import format_percent, format_ratio, format_size, format_value
from commatlas.io.vocabulary import MECHANISM_NAMES

MAX_FINDINGS = 12
MAX_CHARS = 200
MAX_PER_KIND = 4  # a first pass keeps every kind in view; the rest fill in by rank
MIN_EFFECT = 1.2
LOW_PEAK = 0.5
# A head-to-head below this factor is a tie within the run-to-run noise of large copies on one GPU
# (two identical H100 default runs: the median large copy, >= 256 MiB, moved 0.2% between them).
MIN_FACTOR = 1.02
KINDS = ("crossover", "launch_cost", "rank_count", "mpi_library", "allocator", "ce_vs_sm", "gpu_aware_vs_staged",
         "nccl_vs_mpi", "below_peak")
PAIRS = {  # kind: (mechanism a, mechanisms b) of the head-to-head findings
    "ce_vs_sm": ("copy_engine", ("sm_copy",)),
    "gpu_aware_vs_staged": ("mpi_gpu_aware", ("mpi_staged",)),
    "nccl_vs_mpi": ("nccl", ("mpi_gpu_aware", "mpi_staged", "mpi_host")),
}
# The record's launch_mode, in words (answers.py says which one the map shows).
LAUNCH_MODE_WORDS = {"launch_included": "launch included", "back_to_back": "back to back",
                     "graph": "CUDA graph", "persistent": "persistent kernel"}
LAUNCH_MODE_ORDER = ("launch_included", "back_to_back", "graph", "persistent")


def mechanism_name(m: str) -> str:
    return MECHANISM_NAMES.get(m, m.replace("_", " "))


def anchor_of(key: str) -> str:
    """The id of a movement's plot in report.html."""
    return "plot-" + slug(key)


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:120]


def row_class(label: str) -> str:
    """The label with GPU numbers replaced by their role (i, then j): every GPU pair is one kind."""
    names: dict[str, str] = {}

    def role(match: re.Match) -> str:
        names.setdefault(match.group(1), "ij"[min(len(names), 1)])
        return f"GPU {names[match.group(1)]}"
    return re.sub(r"GPU (\d+)", role, label)


def _fig(value: float, metric: str, unit: str = "") -> str:
    text = format_value(value, metric)
    return text + (" busbw" if "busbw" in unit else "")


def find_answers(answers: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[tuple[int, float, str, dict[str, Any]]] = []  # (kind rank, -effect, class, finding)
    for mv in answers["movements"]:
        for kind, effect, text in (_crossovers(mv) + _libraries(mv) + _allocators(mv) + _head_to_head(mv)
                                   + _below_peak(mv)):
            found.append((KINDS.index(kind), -effect, row_class(mv["label"]),
                          {"text": _fit(text), "kind": kind, "movement": mv["key"], "anchor": anchor_of(mv["key"])}))
    for movement, effect, text in _launch_costs(answers.get("launch_modes") or []):
        found.append((KINDS.index("launch_cost"), -effect, row_class(text.split(":")[0]),
                      {"text": _fit(text), "kind": "launch_cost", "movement": movement, "anchor": anchor_of(movement)}))
    for mv, effect, text in _rank_counts(answers["movements"]):
        found.append((KINDS.index("rank_count"), -effect, row_class(mv["label"]),
                      {"text": _fit(text), "kind": "rank_count", "movement": mv["key"], "anchor": anchor_of(mv["key"])}))
    found.sort(key=lambda f: f[:2])
    # One sentence per kind and kind of row: GPU 0 → 1 and GPU 1 → 0 saying the same thing is one finding.
    seen: set[tuple[str, str]] = set()
    unique = []
    for rank, effect, cls, f in found:
        if (f["kind"], cls) not in seen:
            seen.add((f["kind"], cls))
            unique.append(f)
    chosen, per_kind = [], {k: 0 for k in KINDS}
    for f in unique:
        if per_kind[f["kind"]] < MAX_PER_KIND and len(chosen) < MAX_FINDINGS:
            chosen.append(f)
            per_kind[f["kind"]] += 1
    for f in unique:
        if len(chosen) >= MAX_FINDINGS:
            break
        if f not in chosen:
            chosen.append(f)
    return sorted(chosen, key=lambda f: unique.index(f))


def launch_note(answers: dict[str, Any]) -> str | None:
    """Which launch the map's figures are, where a run measured several."""
    shown = sorted({(g["mechanism"], g["map_mode"]) for g in answers.get("launch_modes") or []})
    if not shown:
        return None
    said = "; ".join(f"{mechanism_name(m)}: {LAUNCH_MODE_WORDS.get(mode, mode)}" for m, mode in shown)
    return f"launch: the map shows the launch a user would use ({said}); the findings compare every mode"


def _launch_costs(groups: list[dict[str, Any]]) -> list[tuple[str, float, str]]:
    """"NCCL (nccl.single.pingpong_launch), 8 B: 14.1 us launch included, 7.9 us back to back,
    7.6 us CUDA graph: a launch costs 6.5 us": per benchmark and choices, at the smallest size that
    has the launch-included figure and another mode."""
    out, seen = [], set()
    for g in sorted(groups, key=lambda g: g["bytes"]):
        us = g["us"]
        ident = (g["benchmark"], tuple(sorted(g["choices"].items())))
        if ident in seen or "launch_included" not in us or len(us) < 2:
            continue
        seen.add(ident)
        others = {m: v for m, v in us.items() if m != "launch_included"}
        best = min(others, key=others.get)
        cost = us["launch_included"] - others[best]
        figures = ", ".join(f"{format_value(us[m], 'latency')} {LAUNCH_MODE_WORDS.get(m, m)}"
                            for m in sorted(us, key=lambda m: (LAUNCH_MODE_ORDER + (m,)).index(m)))
        said = (f"a launch costs {format_value(cost, 'latency')} over {LAUNCH_MODE_WORDS.get(best, best)}" if cost > 0
                else f"no launch cost shows against {LAUNCH_MODE_WORDS.get(best, best)}")
        text = f"{mechanism_name(g['mechanism'])} ({g['benchmark']}), {format_size(g['bytes'])}: {figures}; {said}."
        out.append((g["movement"], us["launch_included"] / others[best], text))
    return out


def _fit(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1].rstrip() + "…"


def _settled(cell: dict[str, Any]) -> bool:
    """A cell with a winner whose figures repeated, and not only because the host was busy in every
    pass: no finding builds on a figure that did not, or on the machine's state."""
    return bool(cell["winner"]) and not cell.get("unstable") and not cell.get("host_busy")


def _crossovers(mv: dict[str, Any]) -> list[tuple[str, float, str]]:
    out = []
    cells = [c for c in mv["cells"] if _settled(c)]
    for x in mv["crossovers"][:1]:  # the first one: a second flip is in the map
        below = [c for c in cells if c["bytes"] <= x["between_bytes"][0] and c["winner"]["mechanism"] == x["below"]]
        above = [c for c in cells if c["bytes"] >= x["between_bytes"][1] and c["winner"]["mechanism"] == x["above"]]
        lo = max(below, key=lambda c: c["margin"] or 0, default=None)
        hi = max(above, key=lambda c: c["margin"] or 0, default=None)
        # Cells between the two clear ones are ties or cache figures: say so, or the sentence would
        # read as if the first mechanism won everything up to the second one's size.
        gap = sorted(c["bytes"] for c in mv["cells"] if x["between_bytes"][0] < c["bytes"] < x["between_bytes"][1])
        unclear = (f", no clear winner {'at ' + format_size(gap[0]) if len(gap) == 1 else 'from ' + format_size(gap[0]) + ' to ' + format_size(gap[-1])}"
                   if gap else "")
        text = (f"{mv['label']}: {mechanism_name(x['below'])} is fastest up to {format_size(x['between_bytes'][0])}"
                + (f" ({format_ratio(lo['margin'])} at {format_size(lo['bytes'])})" if lo and lo["margin"] else "")
                + unclear
                + f", {mechanism_name(x['above'])} from {format_size(x['between_bytes'][1])}"
                + (f" ({format_ratio(hi['margin'])} at {format_size(hi['bytes'])})" if hi and hi["margin"] else "") + ".")
        out.append(("crossover", max(lo["margin"] if lo and lo["margin"] else 1, hi["margin"] if hi and hi["margin"] else 1), text))
    return out


def _allocators(mv: dict[str, Any]) -> list[tuple[str, float, str]]:
    best = mv["fastest_allocator"]
    views = mv["by_allocator"]
    if not best or best not in views:
        return []
    mine = {c["bytes"]: c for c in views[best] if _settled(c)}
    out = []
    for name, cells in views.items():
        if name == best:
            continue
        common = [(mine[c["bytes"]], c) for c in cells if _settled(c) and c["bytes"] in mine]
        if not common:
            continue
        fast, slow = common[-1]  # the largest size both measured: the plateau, not the launch cost
        metric = mv["metric"]
        a, b = fast["winner"]["value"], slow["winner"]["value"]
        factor = a / b if metric == "bandwidth" else b / a
        if factor < MIN_EFFECT:
            continue
        slow_name, fast_name = allocator_words(name, best)
        text = (f"{mv['label']}: {slow_name} memory is {format_ratio(factor)} slower than {fast_name} at "
                f"{format_size(fast['bytes'])} ({_fig(b, metric)} vs {_fig(a, metric)}, "
                f"best mechanism of each).")
        out.append(("allocator", factor, text))
    return out


def _libraries(mv: dict[str, Any]) -> list[tuple[str, float, str]]:
    """"MPICH 4.0.2 is 1.4× slower than Open MPI 4.1.4 for a 1 B ping-pong here": each library
    against the fastest one, at the smallest size both measured for a latency (the seed's 1-byte
    figure) and the largest for a bandwidth (the plateau)."""
    best = mv.get("fastest_library")
    views = mv.get("by_library") or {}
    if not best or best not in views:
        return []
    mine = {c["bytes"]: c for c in views[best] if c["winner"]}
    metric = mv["metric"]
    out = []
    for name, cells in views.items():
        if name == best:
            continue
        common = [(mine[c["bytes"]], c) for c in cells if c["winner"] and c["bytes"] in mine]
        if not common:
            continue
        fast, slow = common[0] if metric == "latency" else common[-1]
        slow_name, fast_name = name, best
        a, b = fast["winner"]["value"], slow["winner"]["value"]
        factor = a / b if metric == "bandwidth" else b / a
        if factor < 1:  # the library that wins most sizes loses at this one
            fast, slow, slow_name, fast_name, a, b, factor = slow, fast, best, name, b, a, 1 / factor
        if factor < MIN_FACTOR:
            continue
        text = (f"{mv['label']}: {slow_name} is {format_ratio(factor)} slower than {fast_name} at "
                f"{format_size(fast['bytes'])} ({_fig(b, metric, slow['winner']['unit'])} vs "
                f"{_fig(a, metric, fast['winner']['unit'])}).")
        out.append(("mpi_library", factor, text))
    return out


def winner_words(winner: dict[str, Any]) -> str:
    """"MPI (Open MPI 4.1.4)": the mechanism, and the MPI library where one carried the bytes."""
    library = (winner.get("choices") or {}).get("mpi_library")
    return mechanism_name(winner["mechanism"]) + (f" ({library})" if library else "")


def _rank_counts(movements: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float, str]]:
    """A collective measured at several rank counts (--ranks 2,all) whose fastest way changes with
    the count, at one size: "allreduce, host buffers, 64 KiB: MPI (MPICH 4.0.2) is fastest at 2
    ranks, MPI (Open MPI 4.1.4) at 16 ranks"."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for mv in movements:
        if mv.get("participants"):
            groups.setdefault(mv["key"].replace(f"|{mv['participants']} ranks", ""), []).append(mv)
    out = []
    for rows in groups.values():
        if len(rows) < 2:
            continue
        rows = sorted(rows, key=lambda mv: mv["participants"])
        by_size: dict[int, list[tuple[int, dict[str, Any], dict[str, Any]]]] = {}
        for mv in rows:
            for cell in mv["cells"]:
                if cell["winner"] and cell["clear"] is not False:
                    by_size.setdefault(cell["bytes"], []).append((mv["participants"], cell["winner"], mv))
        for size, winners in sorted(by_size.items(), key=lambda kv: -kv[0]):
            names = [winner_words(w) for _, w, _ in winners]
            if len(set(names)) < 2:
                continue
            label = rows[0]["label"].split(f", {rows[0]['participants']} ranks")[0]
            said = ", ".join(f"{name} at {n} ranks" for (n, _, _), name in zip(winners, names))
            out.append((winners[-1][2], 1.0, f"{label}, {format_size(size)}: the fastest is {said}."))
            break  # the largest size where it changes: the plateau
    return out


def allocator_words(a: str, b: str) -> tuple[str, str]:
    """Two allocator labels with the sides they share left out: "pageable", not "pageable → device"."""
    pa, pb = a.split(" → "), b.split(" → ")
    if len(pa) == len(pb) and pa != pb:
        pa, pb = zip(*[(x, y) for x, y in zip(pa, pb) if x != y])
    return " → ".join(pa), " → ".join(pb)


def _head_to_head(mv: dict[str, Any]) -> list[tuple[str, float, str]]:
    out = []
    crossed = {(x["below"], x["above"]) for x in mv["crossovers"]}
    for kind, (a, others) in PAIRS.items():
        both = [c for c in mv["cells"] if a in c["best_by_mechanism"] and _settled(c)
                and any(o in c["best_by_mechanism"] for o in others)]
        if not both:
            continue
        cell = both[-1]  # the largest size both measured
        b = max((o for o in others if o in cell["best_by_mechanism"]),
                key=lambda o: cell["best_by_mechanism"][o] * (1 if mv["metric"] == "bandwidth" else -1))
        if (a, b) in crossed or (b, a) in crossed:
            continue
        va, vb = cell["best_by_mechanism"][a], cell["best_by_mechanism"][b]
        metric = mv["metric"]
        win, lose, vw, vl = (a, b, va, vb) if (va > vb) == (metric == "bandwidth") else (b, a, vb, va)
        factor = vw / vl if metric == "bandwidth" else vl / vw
        if factor < MIN_FACTOR:
            continue  # a tie (75.7 vs 75.3 GB/s) is no finding: "beats" would overstate it
        small = both[0]
        also = ""
        if small is not cell:
            sw, sl = small["best_by_mechanism"][win], small["best_by_mechanism"][lose]
            if (sw >= sl) == (metric == "bandwidth"):
                also = f"; it also wins at {format_size(small['bytes'])}"
        unit = cell["winner"]["unit"] if cell["winner"] else ""
        text = (f"{mv['label']}: {mechanism_name(win)} beats {mechanism_name(lose)} at {format_size(cell['bytes'])}, "
                f"{_fig(vw, metric, unit)} vs {_fig(vl, metric, unit)} ({format_ratio(factor)}){also}.")
        out.append((kind, factor, text))
    return out


def _below_peak(mv: dict[str, Any]) -> list[tuple[str, float, str]]:
    cells = [c for c in mv["cells"] if _settled(c) and c["winner"]["peak_fraction"] is not None]
    if not cells or mv["metric"] != "bandwidth":
        return []
    top = cells[-1]
    w = top["winner"]
    if w["peak_fraction"] >= LOW_PEAK:
        return []
    text = (f"{mv['label']}: the best at {format_size(top['bytes'])} ({mechanism_name(w['mechanism'])}, "
            f"{_fig(w['value'], 'bandwidth', w['unit'])}) is only {format_percent(w['peak_fraction'])} "
            f"of the {w['peak_gbps']:.4g} GB/s peak.")
    return [("below_peak", 1 - w["peak_fraction"], text)]
