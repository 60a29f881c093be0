"""Faults during a run: a signal to the CLI, a rank killed from outside, a full disk, an
unwritable directory, a failing benchmark. Each ends with one line naming what failed, a known
exit status, every record already written kept, and no process left behind."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_valid_run, have_mpiexec, read_lines, run_cli

# A 2-rank allreduce over 18 sizes at 0.3 s each: far longer than any test waits for.
MPI_RUN = ["run", "--only", "mpi.allreduce", "--ranks", "2", "--sizes", "8:1M", "--time-budget", "0.3", "--precision", "off"]
# How long ranks may outlive a signal or a killed peer: the CLI's grace is 5 s, then SIGKILL.
GONE_WITHIN_S = 12


def wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def start_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "commatlas", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def record_count(results: Path) -> int:
    try:
        return sum(1 for line in results.read_text().splitlines() if line.endswith("}"))
    except OSError:
        return 0


def engine_pids(results: Path) -> list[int]:
    """Engine processes writing to `results` (not the launcher, whose command line names it too)."""
    marker = str(results.resolve()).encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if words and words[0].endswith(b"commatlas-engine") and marker in words:
            pids.append(int(entry))
    return sorted(pids)


def finish(process: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    try:
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.fixture
def mpi_engine(engine_info, engine_benchmarks) -> None:
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")
    if "mpi.allreduce" not in [b["key"] for b in engine_benchmarks]:
        pytest.skip("this engine has no mpi.allreduce")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_every_rank_and_keeps_the_records(mpi_engine, tmp_path: Path, validator, signum) -> None:
    out = tmp_path / "run"
    results = out / "results.jsonl"
    process = start_cli(*MPI_RUN, "--out", str(out))
    try:
        assert wait_for(lambda: record_count(results) >= 3, 120), "no record measured in time"
        assert len(engine_pids(results)) == 2
        process.send_signal(signum)
        assert wait_for(lambda: not engine_pids(results), GONE_WITHIN_S), "ranks outlived the signal"
        stdout, stderr = finish(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr + stdout
    records = assert_valid_run(results, validator)
    assert records[-1]["status"] == "interrupted"
    assert 2 <= records[-1]["results"] < 18
    assert (out / "report.html").is_file(), "the report is written for what was measured"
    assert f"--resume {out}" in " ".join(stdout.split())


def test_killed_rank_ends_the_job_with_a_message(mpi_engine, tmp_path: Path, validator) -> None:
    out = tmp_path / "run"
    results = out / "results.jsonl"
    process = start_cli(*MPI_RUN, "--out", str(out))
    try:
        assert wait_for(lambda: record_count(results) >= 3, 120), "no record measured in time"
        ranks = engine_pids(results)
        assert len(ranks) == 2
        os.kill(ranks[-1], signal.SIGKILL)  # in the middle of an allreduce: the peer waits for it
        assert wait_for(lambda: not engine_pids(results), GONE_WITHIN_S), "the surviving rank hung"
        stdout, stderr = finish(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr + stdout
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("commatlas: error: the engine failed"), last
    assert "rank" in last and ("signal 9" in last or "killed" in last.lower()), last
    records = assert_valid_run(results, validator)
    assert records[-1]["status"] == "failed"
    assert records[-1]["results"] >= 2, "the records written before the kill are kept"


def test_engine_on_a_full_disk_names_the_file(engine_path: Path) -> None:
    done = subprocess.run([str(engine_path), "run", "--only", "reference.harness_overhead", "--quick",
                           "--progress", "none", "--out", "/dev/full"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write results file /dev/full" in lines[0], done.stderr
    assert "No space left" in lines[0]


def limit_file_size(limit_bytes: int):
    """A file-size limit stands in for a full disk: writes past it fail with EFBIG (SIGXFSZ is
    ignored, so the write fails instead of killing the writer), in the CLI and the engine."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return apply


def test_run_on_a_full_disk_keeps_whole_records_and_says_why(engine_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 21 records of about 6 KB each (a full 256-sample reservoir: the fixed budget, not precision
    # stopping, which may keep a few dozen) cannot fit in 48 KiB after the meta record.
    done = subprocess.run([sys.executable, "-m", "commatlas", "run", "--only", "reference.harness_overhead",
                           "--sizes", "1:1M", "--time-budget", "0.01", "--precision", "off", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size(48 * 1024))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("commatlas: error: ") and "results.jsonl" in last and "File too large" in last, last
    records = read_lines(out / "results.jsonl")  # every line whole: the half-written one was cut
    assert records[0]["type"] == "meta"
    assert any(r["type"] == "result" for r in records)
    assert (out / "results.jsonl").read_bytes().endswith(b"\n")


def test_unwritable_output_directory_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = run_cli("run", "--only", "reference.harness_overhead", "--quick", "--out", str(blocker / "run"))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("commatlas: error: cannot write the output directory"), lines
    assert str(blocker / "run") in lines[0]


def test_failing_benchmark_is_an_error_record_and_the_run_goes_on(engine_path: Path, tmp_path: Path,
                                                                   validator) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "--only", "reference.fail,reference.harness_overhead", "--quick", "--out", str(out),
                   env={"COMMATLAS_TEST_FAIL": "1"})
    assert done.returncode == 0, done.stderr
    records = assert_valid_run(out / "results.jsonl", validator)
    errors = [r for r in records if r["type"] == "error"]
    assert [e["benchmark"] for e in errors] == ["reference.fail"]
    assert "deliberate failure" in errors[0]["message"]
    # reference.fail runs first (key order): the benchmark after it was still measured.
    assert [r["benchmark"] for r in records if r["type"] == "result"] == ["reference.harness_overhead"]
    assert records[-1]["status"] == "complete" and records[-1]["errors"] == 1


def test_failing_benchmark_is_not_registered_without_the_variable(engine_benchmarks) -> None:
    if os.environ.get("COMMATLAS_TEST_FAIL"):
        pytest.skip("COMMATLAS_TEST_FAIL is set for the whole test run")
    assert "reference.fail" not in [b["key"] for b in engine_benchmarks]
