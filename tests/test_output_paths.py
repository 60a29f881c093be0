"""Every place commatlas writes for the user (run, report, compare, export) refuses a path it
cannot write with one line and exit status 2: a missing folder, a directory where a file should
be, a file where a folder should be, a place nobody may write (tests run as root, so /proc, where
not even root creates files, stands for it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, assert_one_line_error, run_cli

RUN = FIXTURES / "report" / "gpu_like"  # a stored run, so these tests measure nothing
UNWRITABLE = Path("/proc/commatlas-test")


def bad_file_targets(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("x")
    return {"missing folder": tmp_path / "no" / "such" / "out.x", "a directory": tmp_path / "a-directory",
            "under a file": tmp_path / "a-file" / "out.x", "unwritable place": UNWRITABLE / "out.x"}


@pytest.mark.parametrize("case", ["missing folder", "a directory", "under a file", "unwritable place"])
def test_compare_html_that_cannot_be_written(tmp_path: Path, case: str) -> None:
    target = bad_file_targets(tmp_path)[case]
    done = run_cli("compare", str(RUN), str(RUN), "--html", str(target))
    assert_one_line_error(done)
    assert "cannot write" in done.stderr


@pytest.mark.parametrize("case", ["missing folder", "a directory", "under a file", "unwritable place"])
def test_export_out_that_cannot_be_written(tmp_path: Path, case: str) -> None:
    target = bad_file_targets(tmp_path)[case]
    done = run_cli("export", str(RUN), "--out", str(target))
    assert_one_line_error(done)
    assert "cannot write" in done.stderr


@pytest.mark.parametrize("case", ["a file", "under a file", "unwritable place"])
def test_report_out_that_cannot_be_written(tmp_path: Path, case: str) -> None:
    (tmp_path / "a-file").write_text("x")
    target = {"a file": tmp_path / "a-file", "under a file": tmp_path / "a-file" / "sub",
              "unwritable place": UNWRITABLE / "report"}[case]
    done = run_cli("report", str(RUN), "--out", str(target))
    assert_one_line_error(done)
    assert "cannot write" in done.stderr


def test_report_into_a_run_folder_it_cannot_write(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "report.html").unlink(missing_ok=True)
    (run / "report.html").mkdir()  # stands in for a read-only folder: root may write anywhere else
    done = run_cli("report", str(run))
    assert_one_line_error(done)
    assert "report.html" in done.stderr


def test_compare_html_lands_next_to_the_runs(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(RUN, a)
    shutil.copytree(RUN, b)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    done = run_cli("compare", str(a), str(b), cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (b / "compare.html").is_file() and not (elsewhere / "compare.html").exists()
    assert str(b / "compare.html") in done.stdout


def test_run_out_naming_an_existing_file(tmp_path: Path, engine_path: Path) -> None:
    target = tmp_path / "results.txt"
    target.write_text("mine")
    done = run_cli("run", "--quick", "--only", "reference.harness_overhead", "--out", str(target))
    assert_one_line_error(done)
    assert "is a file" in done.stderr and "already holds" not in done.stderr
    assert target.read_text() == "mine"


def test_run_out_in_an_unwritable_place(engine_path: Path) -> None:
    done = run_cli("run", "--quick", "--only", "reference.harness_overhead", "--out", str(UNWRITABLE / "run"))
    assert_one_line_error(done)
    assert "cannot write" in done.stderr
