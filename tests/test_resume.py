"""`commatlas run --resume RUN_DIR`: an interrupted run continues where it stopped, measures no
point twice, ends with one end record; a different machine, build or option set is refused."""

from __future__ import annotations

import collections
import json
import signal
from pathlib import Path

import pytest

from conftest import assert_one_line_error, assert_valid_run, run_cli
from test_faults import finish, record_count, start_cli, wait_for

# 7 sizes at 0.3 s each: long enough to interrupt after two, short enough to finish on resume.
OPTIONS = ["--only", "reference.harness_overhead", "--sizes", "1:64", "--time-budget", "0.3", "--precision", "off"]
SIZES = 7


@pytest.fixture
def interrupted_run(engine_path: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    process = start_cli("run", *OPTIONS, "--out", str(out))
    try:
        assert wait_for(lambda: record_count(out / "results.jsonl") >= 3, 120), "no record measured in time"
        process.send_signal(signal.SIGINT)
        finish(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    return out


def results_by_point(records: list[dict]) -> collections.Counter:
    return collections.Counter(r["point"] for r in records if r["type"] == "result")


def test_resume_measures_only_the_missing_points(interrupted_run: Path, validator) -> None:
    before = assert_valid_run(interrupted_run / "results.jsonl", validator)
    assert before[-1]["status"] == "interrupted"
    measured_before = results_by_point(before)
    assert 2 <= len(measured_before) < SIZES
    done = run_cli("run", "--resume", str(interrupted_run))
    assert done.returncode == 0, done.stderr
    after = assert_valid_run(interrupted_run / "results.jsonl", validator)
    assert after[-1]["status"] == "complete" and after[-1]["results"] == SIZES
    counts = results_by_point(after)
    assert len(counts) == SIZES and set(counts.values()) == {1}, "a point was measured twice"
    # The records from before the interruption are the same lines, untouched.
    assert after[:len(before) - 1] == before[:-1]


def test_resume_with_the_same_options_given_again(interrupted_run: Path, validator) -> None:
    done = run_cli("run", *OPTIONS, "--resume", str(interrupted_run))
    assert done.returncode == 0, done.stderr
    assert set(results_by_point(assert_valid_run(interrupted_run / "results.jsonl", validator)).values()) == {1}


@pytest.mark.parametrize("changed", [["--time-budget", "0.2"], ["--sizes", "1:128"], ["--repeat", "2"],
                                     ["--sweep-env", "COMMATLAS_SWEEP_PROBE=a,b"]],
                         ids=["budget", "sizes", "repeat", "sweep"])
def test_resume_refuses_other_options(interrupted_run: Path, changed: list[str]) -> None:
    before = (interrupted_run / "results.jsonl").read_bytes()
    swapped = dict(zip(OPTIONS[::2], OPTIONS[1::2]))
    swapped.update(dict(zip(changed[::2], changed[1::2])))
    done = run_cli("run", *[w for pair in swapped.items() for w in pair], "--resume", str(interrupted_run))
    assert_one_line_error(done)
    assert "the options differ" in done.stderr
    assert (interrupted_run / "results.jsonl").read_bytes() == before, "a refused resume changes nothing"


@pytest.mark.parametrize("field,value,what", [(("engine", "git_sha"), "0000000", "build"),
                                              (("engine", "host", "hostname"), "elsewhere", "machine")])
def test_resume_refuses_another_build_or_machine(interrupted_run: Path, field, value, what) -> None:
    results = interrupted_run / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    meta = json.loads(lines[0])
    target = meta
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    results.write_text(json.dumps(meta) + "\n" + "".join(lines[1:]))
    done = run_cli("run", "--resume", str(interrupted_run))
    assert_one_line_error(done)
    assert f"the {what} differs" in done.stderr


def test_resume_refuses_a_complete_run_and_a_missing_one(engine_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli("run", "--only", "reference.harness_overhead", "--quick", "--out", str(out)).returncode == 0
    done = run_cli("run", "--resume", str(out))
    assert_one_line_error(done)
    assert "complete" in done.stderr
    assert_one_line_error(run_cli("run", "--resume", str(tmp_path / "nothing")))
    assert_one_line_error(run_cli("run", "--resume", str(out), "--out", str(tmp_path / "x")))


# --- one damaged line in the middle of a complete run ---------------------------------------------

@pytest.fixture
def run_with_a_damaged_line(engine_path: Path, tmp_path: Path) -> tuple[Path, int]:
    out = tmp_path / "run"
    done = run_cli("run", "--only", "reference.harness_overhead", "--sizes", "1:64", "--quick", "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    assert json.loads(lines[-1])["status"] == "complete"
    damaged = 3  # a result record in the middle (line 1 is meta)
    lines[damaged - 1] = lines[damaged - 1][:40] + "\x00garbage" + lines[damaged - 1][60:]
    results.write_text("".join(lines))
    return out, damaged


def test_a_damaged_line_costs_its_record_not_the_run(run_with_a_damaged_line, tmp_path: Path) -> None:
    out, damaged = run_with_a_damaged_line
    for args in (["report", str(out), "--out", str(tmp_path / "rep")], ["export", str(out), "--out", "-"],
                 ["compare", str(out), str(out), "--html", str(tmp_path / "c.html")]):
        done = run_cli(*args)
        assert done.returncode == 0, (args, done.stderr)
        warnings = [line for line in done.stderr.splitlines() if "not valid JSON" in line]
        # One line per run read, saying how many lines and where.
        assert warnings and all(f"1 line is not valid JSON (line {damaged})" in w for w in warnings), done.stderr
    csv_rows = run_cli("export", str(out), "--out", "-").stdout.strip().splitlines()
    assert len(csv_rows) == 1 + SIZES - 1  # header, and every result but the damaged one


def test_resume_measures_the_point_of_a_damaged_line(run_with_a_damaged_line, validator) -> None:
    out, _ = run_with_a_damaged_line
    done = run_cli("run", "--resume", str(out))
    assert done.returncode == 0, done.stderr
    assert "not valid JSON" in done.stderr  # said, not silent
    after = assert_valid_run(out / "results.jsonl", validator)
    assert after[-1]["status"] == "complete" and after[-1]["results"] == SIZES
    assert set(results_by_point(after).values()) == {1} and len(results_by_point(after)) == SIZES
