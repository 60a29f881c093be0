"""A figure that did not repeat is never crowned: on the real one-H100 run, mark one map winner's
record "unstable" (as the engine's confirmation pass writes it) and the cell loses its clear
winner, its crossovers and findings, and the map says "(unstable)"."""
from __future__ import annotations

import json
from pathlib import Path

from commatlas.analysis.answers import compute_answers
from commatlas.io.results import load_run
from commatlas.report.bestmap import map_rows
from conftest import fixture_run

RUN = fixture_run("h100-atlas-default") / "default"


def _clear_winner(answers: dict) -> tuple[str, str]:
    for m in answers["movements"]:
        for cell in m["cells"]:
            if cell["winner"] and cell["clear"]:
                return m["key"], cell["winner"]["point"]
    raise AssertionError("the run has no clear winner")


def test_an_unstable_winner_is_not_crowned(tmp_path: Path) -> None:
    before = compute_answers(load_run(RUN))
    key, point = _clear_winner(before)
    lines = []
    for line in (RUN / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("point") == point and r["type"] == "result":
            median = r["stats"]["median_s"]
            r["timing"]["stability"] = {"verdict": "unstable", "passes_median_s": [median, 3 * median],
                                        "spread": 2.0, "tolerance": 0.1, "confirm_samples": 8, "separation_s": 1.5}
        lines.append(json.dumps(r))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    run = load_run(tmp_path)
    assert next(r for r in run.results if r.point == point).stability == "unstable"
    after = compute_answers(run)
    cell = next(c for m in after["movements"] if m["key"] == key for c in m["cells"]
                if c["winner"] and c["winner"]["point"] == point)
    assert cell["clear"] is False and cell["unstable"]
    assert cell["winner"]["stability"] == "unstable"
    rows, _ = map_rows(after)
    names = [c.name for row in rows for c in row.cells if c]
    assert any(n.endswith("(unstable)") for n in names)


def test_records_without_a_verdict_read_as_unknown() -> None:
    run = load_run(RUN)  # written before engines confirmed points
    assert {r.stability for r in run.results} == {None}


def test_no_finding_builds_on_figures_that_did_not_repeat(tmp_path: Path) -> None:
    from commatlas.analysis.findings import find_answers

    assert find_answers(compute_answers(load_run(RUN)))  # the real run has findings
    lines = []
    for line in (RUN / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["type"] == "result":
            m = r["stats"]["median_s"]
            r["timing"]["stability"] = {"verdict": "unstable", "passes_median_s": [m, 2 * m]}
        lines.append(json.dumps(r))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert find_answers(compute_answers(load_run(tmp_path))) == []


LIBRARIES_RUN = fixture_run("h100x2-mpi-libraries") / "run"


def test_the_html_map_marks_every_unstable_cell(tmp_path: Path) -> None:
    """On a real 2x H100 run whose engine wrote `stability` records, every map cell whose winner
    did not repeat is drawn as unstable in report.html (its own class and the word), never as a
    crowned ("clear") cell."""
    import re
    import shutil

    from commatlas.report import write_report

    shutil.copy(LIBRARIES_RUN / "results.jsonl", tmp_path / "results.jsonl")
    rows, _ = map_rows(compute_answers(load_run(tmp_path)))
    unstable = [c for row in rows for c in row.cells if c and c.unstable]
    assert len(unstable) >= 5  # the run has points that did not repeat
    html = write_report(tmp_path).html.read_text()
    table = html[html.index('<table class="map">'):]
    table = table[:table.index("</table>")]
    cells = re.findall(r'<td class="(\w+)"[^>]*>(.*?)</td>', table)
    marked = [body for cls, body in cells if cls == "unstable"]
    assert len(marked) == len(unstable)
    assert all('<span class="pct">unstable</span>' in body for body in marked)
