"""The run summary's GPU pair matrices, on the committed default run on 2x H200
(results/nvidia-h200-x2/atlas-2gpu/default, whole in tests/fixtures/h200x2-atlas-2gpu: the pair is the movement's from.gpu -> to.gpu)."""

from __future__ import annotations

from rich.console import Console

from commatlas.analysis.pair_matrix import EMPTY, pair_matrices
from commatlas.report.summary import print_summary
from conftest import fixture_run, read_lines

RECORDS = [r for r in read_lines(fixture_run("h200x2-atlas-2gpu") / "default" / "results.jsonl")
           if r["type"] != "result" or r["benchmark"].endswith("_matrix")]


def test_one_matrix_per_benchmark_and_direction() -> None:
    found = [(m.benchmark, m.direction, m.gpus) for m in pair_matrices(RECORDS)]
    assert found == [("gpu.copy_ce_matrix", "bi", [0, 1]), ("gpu.copy_ce_matrix", "uni", [0, 1]),
                     ("gpu.copy_sm_matrix", "bi", [0, 1]), ("gpu.copy_sm_matrix", "uni", [0, 1])]


def test_cells_are_bandwidth_and_fraction_of_peak() -> None:
    matrices = {(m.benchmark, m.direction): m for m in pair_matrices(RECORDS)}
    # 393.73 GB/s at 82.35 % of 478.125 GB/s (NVLink4 x18), 0 -> 1; 393.71 GB/s 82.34 %, 1 -> 0.
    assert matrices["gpu.copy_ce_matrix", "uni"].rows() == [[EMPTY, "394 GB/s 82%"], ["394 GB/s 82%", EMPTY]]
    assert matrices["gpu.copy_sm_matrix", "uni"].rows() == [[EMPTY, "368 GB/s 77%"], ["368 GB/s 77%", EMPTY]]
    # Bidirectional is measured once per pair (0 <-> 1): the other triangle stays empty.
    assert matrices["gpu.copy_ce_matrix", "bi"].rows() == [[EMPTY, "769 GB/s 80%"], [EMPTY, EMPTY]]
    assert matrices["gpu.copy_sm_matrix", "bi"].rows() == [[EMPTY, "716 GB/s 75%"], [EMPTY, EMPTY]]


def test_a_wrong_value_shows_in_its_cell() -> None:
    changed = [dict(r) for r in RECORDS]
    for r in changed:
        if r.get("benchmark") == "gpu.copy_ce_matrix" and r["params"]["direction"] == "uni" and r["params"]["src_gpu"] == 1 \
                and r["bytes"] == 256 * 1024 * 1024:
            r["bandwidth_gbps"], r["peak"] = 100.0, {**r["peak"], "fraction": 0.25}
    m = next(m for m in pair_matrices(changed) if (m.benchmark, m.direction) == ("gpu.copy_ce_matrix", "uni"))
    assert m.rows() == [[EMPTY, "394 GB/s 82%"], ["100 GB/s 25%", EMPTY]]


def test_printed_with_the_run_summary() -> None:
    console = Console(record=True, width=200)
    print_summary(console, RECORDS)
    text = console.export_text()
    assert "gpu.copy_ce_matrix (uni," in text
    row = next(line for line in text.splitlines() if "GPU 1" in line and "394 GB/s 82%" in line)
    assert row.index("394 GB/s 82%") < row.rindex(EMPTY)  # src 1 -> dst 0 filled, 1 -> 1 empty
    assert "Best interface per movement and size" in text  # the map leads


def test_no_matrix_without_matrix_records() -> None:
    assert pair_matrices([r for r in RECORDS if not r.get("benchmark", "").endswith("_matrix")]) == []
