"""The terminal's error table, on real failures of 4x H100 (tests/fixtures/h100x4-errors).

GPU-aware MPI on managed memory failed its wire check at 1 MiB, its largest size, and the engine
then left its three smaller sizes "not measured" with the same cause: twelve error records of three
variants. A row each took about 130 lines at 80 columns. The table has one row per benchmark,
variant and message, listing its sizes, as the HTML report's list of what was not measured does.
"""
from __future__ import annotations

import io
from collections import Counter

from rich.console import Console

from commatlas.io.records import read_records
from commatlas.io.results import load_run
from commatlas.report.not_measured import not_measured
from commatlas.report.summary import errors_table, print_summary
from conftest import fixture_run

ERRORS = fixture_run("h100x4-errors")


def rendered(run_dir, width=80) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=width, color_system=None), read_records(run_dir / "results.jsonl"))
    return out.getvalue()


def test_a_variants_failed_sizes_share_one_row_per_message():
    run = load_run(ERRORS / "call4")
    assert len(run.failures) == 12
    groups = Counter((f.benchmark, tuple(sorted(f.params.items())), f.message) for f in run.failures)
    assert len(groups) == 6  # per variant: the size whose check failed, and the sizes left after it
    table = errors_table(run)
    assert table is not None and table.row_count == len(groups)
    rows = not_measured(run.failures, lambda f: f.message)
    sizes = sorted(r.sizes for r in rows)
    assert sizes == ["1 MiB"] * 3 + ["8 B, 4 KiB, 64 KiB"] * 3, sizes


def test_at_80_columns_each_variant_is_named_once_per_message_and_its_parameters_stay_whole():
    text = rendered(ERRORS / "call4")
    errors = text[text.index("Errors"):]
    assert errors.count("mpi.gpu_aware.bandwidth") == 2
    assert "allocator=managed" in errors  # a parameter is never cut inside its name or value
    # Twelve rows made the table about 130 lines; six, each about as tall as its message.
    assert len(errors.splitlines()) < 60, errors


def test_a_failure_of_its_own_keeps_its_row():
    # The hang of call 1: the watchdog's message is the only error of nccl.bandwidth there.
    run = load_run(ERRORS / "call1")
    assert [f.benchmark for f in run.failures] == ["nccl.bandwidth"]
    rows = not_measured(run.failures, lambda f: f.message)
    assert len(rows) == 1 and rows[0].sizes == "4 GiB"
    assert rows[0].reason.startswith("watchdog: nccl.bandwidth")
    assert "watchdog" in rendered(ERRORS / "call1")
