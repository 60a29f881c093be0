"""The report of the committed --quick run on an H100 (tests/fixtures/h100-atlas-quick; one pass, one node, no --precision): the
smallest size measured is on the first screen (an 8 B MPI ping-pong, where a bin up to 4 KiB showed
only 4 KiB), sections with nothing to say are left out, and the OSU table does not claim a 0.0%
spread from one pass."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from commatlas.analysis.answers import compute_answers
from commatlas.io.results import load_run
from commatlas.report import write_report
from commatlas.report.bestmap import bands, map_rows
from commatlas.report.summary import print_summary
from conftest import fixture_run

QUICK = fixture_run("h100-atlas-quick")


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    paths = write_report(QUICK, tmp_path_factory.mktemp("quick"))
    return paths.html.read_text(), paths.markdown.read_text()


def pingpong_row(answers):
    rows, _ = map_rows(answers)
    return next(r for r in rows if r.short == "rank 0 → rank 1, host buffers, ping-pong")


def test_the_first_band_starts_at_the_smallest_size_measured():
    answers = compute_answers(load_run(QUICK))
    assert answers["bins"][0]["label"] == "≤ 64 B"
    first = bands(pingpong_row(answers))[0]
    assert first.low == 8
    assert first.figures.startswith("468 ns"), first.figures


def test_terminal_and_report_maps_show_the_8_byte_latency(quick_report):
    records = [json.loads(line) for line in (QUICK / "results.jsonl").read_text().splitlines() if line.strip()]
    out = io.StringIO()
    print_summary(Console(file=out, width=120, color_system=None), records)
    line = next(x for x in out.getvalue().splitlines() if "ping-pong" in x and "host buffers" in x)
    assert "8 B–4 KiB" in line and "468 ns" in line, line
    assert "| 8 B |" in quick_report[1]


def test_empty_sections_are_left_out(quick_report):
    html, _ = quick_report
    # One node, no soak, and no collective with a known expected goodput: nothing to say.
    assert 'id="multinode"' not in html
    assert 'id="precision"' not in html  # no point missed a precision target


def test_one_pass_has_no_osu_spread(quick_report):
    html, markdown = quick_report
    assert "unknown (one pass)" in html and "unknown (one pass)" in markdown
    assert "<td>0.0%</td>" not in html and "| 0.0% |" not in markdown


# The first --quick run of this session's head on 2x H100 (tests/fixtures/h100x2-quick): both
# GPUs, one rank per GPU, the one-process NCCL suite left out.
QUICK_2GPU = fixture_run("h100x2-quick")


def test_no_two_neighbouring_columns_are_headed_by_one_size(tmp_path):
    """Was: "| movement | 8 B | 8 B | 64 KiB |": the latency rows measured 8 B in their smallest
    bin and 4 KiB in the next, the bandwidth rows 8 B in their first bin, which is that next one."""
    paths = write_report(QUICK_2GPU, tmp_path)
    header = next(line for line in paths.markdown.read_text().splitlines() if line.startswith("| movement |"))
    sizes = [cell.strip() for cell in header.strip("|").split("|")[1:]]
    assert sizes[:3] == ["8 B", "4 KiB", "64 KiB"], header
    assert all(a != b for a, b in zip(sizes, sizes[1:])), header
    # A cell measured at another size than its column's names it.
    assert "at 8 B" in paths.markdown.read_text()
