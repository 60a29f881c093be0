"""The per-point watchdog: a point that never finishes stops the job with one line naming it,
a non-zero exit, and the records written before it kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

HANG_ENV = {**os.environ, "COMMATLAS_TEST_HANG": "1"}


def run_engine(engine: Path, *args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(engine), *args], capture_output=True, text=True, env=env, timeout=timeout, check=False)


def test_hang_is_not_registered_without_the_variable(engine_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COMMATLAS_TEST_HANG"}
    listing = json.loads(run_engine(engine_path, "list", "--json", env=env).stdout)
    assert "reference.hang" not in [b["key"] for b in listing]


def test_watchdog_stops_a_hanging_point(engine_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "hang.jsonl"
    started = time.monotonic()
    # host.memcpy sorts before reference.hang, so its records are written before the hang.
    done = run_engine(engine_path, "run", "--only", "host.memcpy,reference.hang", "--sizes", "8", "--quick",
                      "--watchdog", "2", "--progress", "none", "--out", str(out), env=HANG_ENV)
    elapsed = time.monotonic() - started
    assert done.returncode == 3, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if "watchdog" in line]
    assert len(lines) == 1, done.stderr
    assert "reference.hang" in lines[0] and "8 B" in lines[0] and "1 rank" in lines[0], lines[0]
    assert "within 2 s" in lines[0], lines[0]
    assert 2 <= elapsed < 30
    # The point measured before the hang is kept.
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    kept = {r["benchmark"] for r in records if r["type"] == "result"}
    assert kept == {"host.memcpy"}, records


def test_watchdog_zero_is_off_and_bad_values_are_usage_errors(engine_path: Path, tmp_path: Path) -> None:
    done = run_engine(engine_path, "run", "--only", "reference.harness_overhead", "--quick", "--watchdog", "-1",
                      "--out", str(tmp_path / "x.jsonl"), env=dict(os.environ))
    assert done.returncode == 2 and "--watchdog" in done.stderr
    # 0 is accepted, so the message may not say "above 0".
    assert "0 (off) or more" in done.stderr and "above 0" not in done.stderr, done.stderr
    # 0 disables it: the hang then outlives a short timeout instead of being stopped.
    with pytest.raises(subprocess.TimeoutExpired):
        run_engine(engine_path, "run", "--only", "reference.hang", "--quick", "--watchdog", "0", "--progress", "none",
                   "--out", str(tmp_path / "y.jsonl"), env=HANG_ENV, timeout=4)


@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec")
def test_watchdog_aborts_every_rank_under_mpi(engine_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "mpi.jsonl"
    done = subprocess.run(["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "2", "-x", "COMMATLAS_TEST_HANG",
                           str(engine_path), "run", "--mpi", "--only", "reference.hang", "--quick", "--watchdog", "2",
                           "--progress", "none", "--out", str(out)],
                          capture_output=True, text=True, env=HANG_ENV, timeout=90, check=False)
    assert done.returncode != 0
    assert "watchdog: reference.hang" in done.stderr and "2 ranks" in done.stderr, done.stderr
