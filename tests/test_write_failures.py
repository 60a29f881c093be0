"""A file that cannot be written whole (a full disk) is one line and exit status 2, and leaves no
partial file: report.html, summary.md, answers.json, results.csv are written beside their place
and renamed over it."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from commatlas import cli

from commatlas.io import outputs

HOST_RUN = Path(__file__).resolve().parent / "fixtures" / "report" / "host"
OUTPUTS = ("report.html", "summary.md", "answers.json")


def disk_full(monkeypatch) -> None:
    """The disk fills while a file is written: a full disk may report it only when the data is
    flushed (delayed allocation), so at fsync."""
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(outputs.os, "fsync", full)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch) -> None:
    target = tmp_path / "answers.json"
    target.write_text("old\n")
    disk_full(monkeypatch)
    with pytest.raises(OSError) as e:
        outputs.write_atomically(target, "new " * 100000)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(target)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.json"]


def test_report_on_a_full_disk_is_one_line_exit_2_and_no_partial_file(tmp_path, monkeypatch, capsys) -> None:
    disk_full(monkeypatch)
    status = cli.main(["report", str(HOST_RUN), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert "No space left on device" in err[0] and str(tmp_path / "out") in err[0]
    assert not any((tmp_path / "out").iterdir()), list((tmp_path / "out").iterdir())


def test_export_to_a_full_device_is_one_line_exit_2() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this machine")
    done = subprocess.run([sys.executable, "-m", "commatlas", "export", str(HOST_RUN), "--out", "/dev/full"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot write /dev/full" in done.stderr and "Traceback" not in done.stderr
    assert os.path.exists("/dev/full") and not Path("/dev/full").is_file()  # written to, never replaced


def test_run_whose_report_cannot_be_written_exits_2_and_keeps_its_records(
        engine_path, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("COMMATLAS_ENGINE", str(engine_path))
    disk_full(monkeypatch)
    out = tmp_path / "r"
    status = cli.main(["run", "--quick", "--only", "reference.harness_overhead", "--out", str(out)])
    captured = capsys.readouterr()
    last = captured.err.strip().splitlines()[-1]
    assert status == 2, captured.err
    assert last.startswith("commatlas: error: cannot write ") and "No space left on device" in last
    assert f"results: {out / 'results.jsonl'}" in captured.out  # where the records are
    assert (out / "results.jsonl").stat().st_size > 0
    assert not any((out / name).exists() for name in OUTPUTS)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
