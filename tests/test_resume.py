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
