"""The report's multi-node part, kept apart from the templates: results grouped by node pair,
measured against expected collective goodput, and soak time series with their noise measures.
`section_html(records)` returns one self-contained HTML fragment ("" when there is nothing to show)."""

from __future__ import annotations

import html
from typing import Any

from commatlas.analysis.multinode import by_node_pair, soaks
from commatlas.units import format_size


def _esc(x: object) -> str:
    return html.escape(str(x))


def _node_pairs(records: list[dict[str, Any]]) -> str:
    groups = by_node_pair(records)
    if len(groups) <= 1 and all(" ↔ " not in k for k in groups):
        return ""
    rows = []
    for pair, rs in sorted(groups.items()):
        for r in sorted(rs, key=lambda r: (r["benchmark"], r.get("bytes") or 0)):
            peak = r.get("peak") or {}
            peak_text = f"{peak['gbps']:.3g} GB/s" if peak.get("gbps") else peak.get("unknown", "")
            rows.append(f"<tr><td>{_esc(pair)}</td><td>{_esc(r['benchmark'])}</td><td>{_esc(format_size(r['bytes']))}</td>"
                        f"<td>{r['bandwidth_gbps']:.3g} GB/s</td><td>{r['latency_us']:.3g} us</td><td>{_esc(peak_text)}</td></tr>")
    return ("<h3>By node pair</h3><table><tr><th>nodes</th><th>benchmark</th><th>size</th><th>bandwidth</th>"
            "<th>latency</th><th>peak</th></tr>" + "".join(rows) + "</table>")


def _expected(records: list[dict[str, Any]]) -> str:
    rows = []
    unknown: dict[str, int] = {}  # reason -> points: a table of "unknown" rows says nothing
    for r in records:
        c = r.get("collective") or {}
        e = c.get("expected")
        if r.get("type") != "result" or not e:
            continue
        if e.get("goodput_gbps"):
            verdict = f"{e['goodput_gbps']:.3g} GB/s ({100 * e['fraction']:.0f}%)"
            how = e.get("source", "")
        else:
            reason = str(e.get("unknown", ""))
            unknown[reason] = unknown.get(reason, 0) + 1
            continue
        rows.append(f"<tr><td>{_esc(r['benchmark'])}</td><td>{_esc(format_size(r['bytes']))}</td><td>{r['ranks']}</td>"
                    f"<td>{c.get('goodput_gbps', 0):.3g} GB/s</td><td>{_esc(verdict)}</td><td>{_esc(how)}</td></tr>")
    if not rows:
        return ""  # no expected goodput known anywhere: nothing to compare (the records say why)
    why = "".join(f"<li>{n} point(s): {_esc(reason)}</li>" for reason, n in unknown.items())
    return ("<h3>Collective goodput: measured against expected</h3><table><tr><th>benchmark</th><th>size</th><th>ranks</th>"
            "<th>measured goodput</th><th>expected (fraction)</th><th>from</th></tr>" + "".join(rows) + "</table>"
            + (f"<p>No expected goodput for:</p><ul>{why}</ul>" if why else ""))


def _soak_svg(start_s: list[float], samples_s: list[float], title: str) -> str:
    import matplotlib  # deliberate: pyplot only for a run with soaks; it sets the Agg backend first

    matplotlib.use("Agg")
    import io  # deliberate: with pyplot, for the soak plot's SVG

    import matplotlib.pyplot as plt  # deliberate: after the backend is set

    fig, ax = plt.subplots(figsize=(8, 2.6))
    ax.plot(start_s, [s * 1e6 for s in samples_s], ",", alpha=0.7)
    ax.set_xlabel("time since the soak began (s)")
    ax.set_ylabel("iteration (us)")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.find("<svg"):]


def _soaks(records: list[dict[str, Any]]) -> str:
    found = soaks(records)
    if not found:
        return ""
    rows, plots = [], []
    for s in found:
        m = s.measures
        rows.append(f"<tr><td>{_esc(s.benchmark)}</td><td>{_esc(format_size(s.bytes))}</td><td>{s.node_count}</td><td>{s.ranks}</td>"
                    f"<td>{m.iterations}</td><td>{m.quiet_min_s * 1e6:.3g} us</td><td>{m.median_slowdown:.2f}x</td>"
                    f"<td>{m.tail_slowdown:.2f}x</td><td>{100 * m.share_slow:.2f}%</td></tr>")
        plots.append(_soak_svg(s.start_s, s.samples_s,
                               f"{s.benchmark} {format_size(s.bytes)}, {s.ranks} ranks on {s.node_count} node(s)"))
    return ("<h3>Noise over time (soak)</h3><p>Against the quietest iteration: slowdown of the median and of the 99th "
            "percentile, and the share of iterations above 1.5x the median.</p><table><tr><th>benchmark</th><th>size</th>"
            "<th>nodes</th><th>ranks</th><th>iterations</th><th>quiet minimum</th><th>median slowdown</th>"
            "<th>tail slowdown</th><th>above 1.5x median</th></tr>" + "".join(rows) + "</table>" + "".join(plots))


def section_html(records: list[dict[str, Any]]) -> str:
    parts = [p for p in (_node_pairs(records), _expected(records), _soaks(records)) if p]
    if not parts:
        return ""
    return '<section id="multinode"><h2>Nodes, expected goodput, noise</h2>' + "".join(parts) + "</section>"
