"""The smallest size measured is on the first screen: the map's first column holds the smallest
messages at the smallest size measured (the committed --quick run on an H100 measured an 8 B MPI
ping-pong; a bin up to 4 KiB showed only 4 KiB)."""
from __future__ import annotations

import io
import json

from rich.console import Console

from commatlas.answers import compute_answers
from commatlas.report import write_report
from commatlas.report.bestmap import bands, map_rows
from commatlas.results import load_run
from commatlas.summary import print_summary
from conftest import REPO

QUICK = REPO / "results" / "nvidia-h100-x1" / "atlas-quick"


def pingpong_row(answers):
    rows, _ = map_rows(answers)
    return next(r for r in rows if r.short == "rank 0 → rank 1, host buffers, ping-pong")


def test_the_first_band_starts_at_the_smallest_size_measured():
    answers = compute_answers(load_run(QUICK))
    assert answers["bins"][0]["label"] == "≤ 64 B"
    first = bands(pingpong_row(answers))[0]
    assert first.low == 8
    assert first.figures.startswith("468 ns"), first.figures


def test_terminal_and_report_maps_show_the_8_byte_latency(tmp_path):
    records = [json.loads(line) for line in (QUICK / "results.jsonl").read_text().splitlines() if line.strip()]
    out = io.StringIO()
    print_summary(Console(file=out, width=120, color_system=None), records)
    line = next(x for x in out.getvalue().splitlines() if "ping-pong" in x and "host buffers" in x)
    assert "8 B–4 KiB" in line and "468 ns" in line, line
    paths = write_report(QUICK, tmp_path)
    assert "| 8 B |" in paths.markdown.read_text()
