"""What a run of two MPI libraries answers, from a real one (tests/fixtures/mpi-libraries: Open MPI
4.1.4 and MPICH 4.0.2, 2 and 4 ranks): libraries compete as allocators do, the findings say which
is slower by how much, compare sets them side by side, and each has its own OSU-method rows."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from commatlas.analysis.answers import compute_answers
from commatlas.analysis.findings import find_answers
from commatlas.errors import UsageError

RUN = FIXTURES / "mpi-libraries"
LIBRARIES = {"Open MPI 4.1.4", "MPICH 4.0.2"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("libraries") / "run"
    out.mkdir()
    shutil.copy(RUN / "results.jsonl", out / "results.jsonl")
    return out


@pytest.fixture(scope="module")
def answers(run_dir: Path) -> dict:
    return compute_answers(run_dir)


def test_mpi_rows_hold_both_libraries_and_a_view_of_each(answers: dict) -> None:
    rows = {mv["label"]: mv for mv in answers["movements"]}
    for label in ("rank 0 → rank 1, host buffers, ping-pong", "allreduce, host buffers, 2 ranks",
                  "allreduce, host buffers, 4 ranks"):
        mv = rows[label]
        assert set(mv["libraries"]) == LIBRARIES, label
        assert set(mv["by_library"]) == LIBRARIES
        assert mv["fastest_library"] in LIBRARIES
        for cell in mv["cells"]:
            # The runner-up is the other library's best: the same mechanism is no rival to itself.
            assert cell["winner"]["choices"]["mpi_library"] != cell["runner_up"]["choices"]["mpi_library"], cell


def test_findings_say_which_library_is_slower_by_how_much(answers: dict) -> None:
    said = [f["text"] for f in answers["findings"] if f["kind"] == "mpi_library"]
    assert any(t.startswith("rank 0 → rank 1, host buffers, ping-pong: ") and " at 1 B (" in t for t in said), said
    for text in said:
        slower, faster = text.split(": ", 1)[1].split(" is ")[0], text.split(" slower than ")[1].split(" at ")[0]
        assert {slower, faster} == LIBRARIES, text
        assert "× slower than" in text


def test_a_winner_that_changes_with_the_rank_count_is_a_finding(answers: dict) -> None:
    same = [f for f in answers["findings"] if f["kind"] == "rank_count"]
    rows = [mv for mv in answers["movements"] if mv["operation"] == "allreduce"]
    winners = {mv["participants"]: mv["cells"][-1]["winner"]["choices"]["mpi_library"] for mv in rows}
    assert bool(same) == (len(set(winners.values())) > 1)
    # The 4-rank row won by the other library: the sentence names both counts and both winners.
    changed = copy.deepcopy(answers)
    four = next(mv for mv in changed["movements"] if mv["operation"] == "allreduce" and mv["participants"] == 4)
    cell = four["cells"][-1]
    cell["winner"], cell["runner_up"] = cell["runner_up"], cell["winner"]
    cell["clear"] = True
    two = next(mv for mv in changed["movements"] if mv["operation"] == "allreduce" and mv["participants"] == 2)
    two["cells"][-1]["clear"] = True
    found = [f["text"] for f in find_answers(changed) if f["kind"] == "rank_count"]
    assert found and "at 2 ranks" in found[0] and "at 4 ranks" in found[0], found
    assert all(name in found[0] for name in LIBRARIES), found


def test_the_fixed_library_map_keeps_one_library(answers: dict) -> None:
    from commatlas.report.bestmap import library_rows

    rows, notes = library_rows(answers, "mpich")
    assert rows and not notes
    assert all("[MPICH 4.0.2]" in row.label for row in rows)
    assert all(c.library in ("", "MPICH 4.0.2") for row in rows for c in row.cells if c)
    _, notes = library_rows(answers, "mvapich")
    assert notes and all("not measured with mvapich" in n for n in notes)


def test_compare_sets_two_libraries_of_one_run_side_by_side(run_dir: Path) -> None:
    from commatlas.analysis.compare import compare_runs

    [comparison] = compare_runs([f"{run_dir}@openmpi", f"{run_dir}@mpich"])
    assert any("mpi_library" in line for line in comparison.settings), comparison.settings
    assert comparison.points and not comparison.only_base and not comparison.only_other, comparison.points
    with pytest.raises(UsageError, match="no records of the MPI library"):
        compare_runs([f"{run_dir}@openmpi", f"{run_dir}@mvapich"])


def test_each_library_has_its_own_osu_method_rows(run_dir: Path) -> None:
    from commatlas.analysis import osu
    from commatlas.io.records import read_records

    rows = osu.comparison_rows(read_records(run_dir / "results.jsonl"))
    assert {row.library for row in rows} == LIBRARIES
    assert all(row.benchmark == "mpi.pingpong" and row.engine > 0 and row.reference > 0 for row in rows)
