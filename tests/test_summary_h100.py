"""The end-of-run summary as printed, on the records of the committed real single-H100 run
(results/nvidia-h100-x1/atlas-default, whole in tests/fixtures/h100-atlas-default): its tables read at 80 columns."""
from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from commatlas.report.summary import print_summary
from conftest import fixture_run

RUN = fixture_run("h100-atlas-default") / "default"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines() if line.strip()]


def printed(records: list[dict], width: int = 80) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=width, force_terminal=True, color_system=None), records)
    return out.getvalue()


def test_osu_figures_have_no_exponents(records) -> None:
    """Was "1.035e+04 MB/s", folded over two lines at 80 columns."""
    text = printed(records)
    table = text[text.index("Engine vs OSU method"):text.index("Skipped")]
    assert "e+" not in table
    # The units of every other table (GB/s, ns/us) and ratios as ×: one convention on the screen.
    assert "│ mpi.bandwidth │ 64 KiB │ 8.3 GB/s     │ 10.3 GB/s    │ 0.80×" in table
    assert "│ mpi.pingpong  │ 1 B    │ 477 ns       │ 453 ns       │ 1.05×" in table
    assert "MB/s" not in text and not re.search(r"[+−-]\d+\.\d%", text)
    assert max(len(line) for line in text.splitlines()) <= 80


def test_skips_are_one_row_per_reason(records) -> None:
    """Was one row per benchmark: 45 rows for 6 reasons, the GPU-aware MPI one 14 times over."""
    skips = [r for r in records if r["type"] == "skip"]
    text = printed(records, 100)
    table = text[text.index("Skipped"):]
    assert table.count("GPU-aware MPI refused") == 1
    assert table.count("needs one GPU per rank") == 1
    rows = [line.split("│")[1:4] for line in table.splitlines() if line.startswith("│")]
    named = {name.strip() for first, _, _ in rows for name in first.split(",") if name.strip()}
    assert named == {r["benchmark"] for r in skips}
    points = [int(count) for _, count, _ in rows if count.strip()]
    assert sorted(points) == sorted([4, 25, 2, 42, 15, 9]) and sum(points) == len(skips)


def test_map_at_80_columns_puts_each_movement_on_a_line_of_its_own(records) -> None:
    """Was a side-by-side table that folded "host memory ⇄ GPU 0" after "GPU" and broke
    "bucketed_allreduce" inside the word at 80 columns."""
    text = printed(records)
    lines = text[:text.index("Findings")].splitlines()
    assert max(len(line) for line in lines) <= 80
    # Each label whole on one line, its bands indented below it.
    label = lines.index("host memory ⇄ GPU 0")
    assert lines[label + 1].startswith("  4 KiB–256 MiB   copy engine ")
    assert any(line.startswith("bucketed_allreduce, GPU buffers, 2 ranks") for line in lines)
    assert lines[2].split() == ["sizes", "fastest", "figure,", "%", "of", "peak"]


def test_map_side_by_side_where_it_fits(records) -> None:
    text = printed(records, 160)
    (row,) = [line for line in text.splitlines() if line.startswith("host memory ⇄ GPU 0 ")]
    assert "4 KiB–256 MiB" in row and "copy engine" in row
