"""Ctrl-C during a run stops the engine and keeps every record measured so far, closed by an
`end` record of status "interrupted"; the exit status is 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import assert_valid_run, read_lines


def wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_sigint_keeps_records_and_ends_interrupted(engine_path: Path, tmp_path: Path, validator) -> None:
    out = tmp_path / "run"
    results = out / "results.jsonl"
    # 21 sizes at 0.5 s each: far longer than the test waits.
    process = subprocess.Popen(
        [sys.executable, "-m", "commatlas", "run", "--only", "reference.harness_overhead", "--sizes", "1:1M",
         "--time-budget", "0.5", "--precision", "off", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        measured = wait_for(lambda: results.exists() and len(read_lines(results)) >= 2, timeout_s=120)
        assert measured, "the run wrote no record in time"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    records = assert_valid_run(results, validator)
    end = records[-1]
    assert end["status"] == "interrupted"
    assert end["results"] >= 1
    assert end["results"] < 21, "the run was stopped, not finished"
    assert "interrupted" in stdout
    # The hint to continue is one whole line (copied and pasted), not folded at 80 columns.
    assert f"commatlas run --resume {out}" in stdout.splitlines(), stdout
    assert max(len(line) for line in stdout.splitlines()) <= max(80, len(f"commatlas run --resume {out}"))


def test_engine_is_stopped_with_the_run(engine_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "commatlas", "run", "--only", "reference.harness_overhead", "--sizes", "1:1M",
         "--time-budget", "0.5", "--precision", "off", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (out / "results.jsonl").exists() and len(read_lines(out / "results.jsonl")) >= 2, 120)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    marker = str(out / "results.jsonl")
    engines = [pid for pid in os.listdir("/proc") if pid.isdigit() and marker in _cmdline(pid)]
    assert not engines, "the engine outlived the interrupted run"


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
