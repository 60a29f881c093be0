"""A real single-process run: the run directory holds meta, the engine's records and end, and
every line validates against schema/results.schema.json."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_valid_run, read_lines, run_cli

# The fastest host benchmarks: CI has two shared cores, and the schema check needs real records
# of every host kind, not a long sweep.
QUICK_HOST = "reference.*,host.memcpy"


@pytest.fixture(scope="module")
def host_run(engine_path: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("host") / "run"
    done = run_cli("run", "--quick", "--suite", "host", "--only", QUICK_HOST, "--out", str(out), timeout=300,
                   env={"NCCL_DEBUG": "WARN", "UNRELATED_VARIABLE": "x"})
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    return out


def test_records_validate(host_run: Path, validator) -> None:
    records = assert_valid_run(host_run / "results.jsonl", validator)
    results = [r for r in records if r["type"] == "result"]
    assert results, "a host run measures something"
    assert all(r["verified"]["ok"] for r in results)
    assert all(r["suite"] == "host" and r["ranks"] == 1 for r in results)


def test_meta_names_the_environment(host_run: Path, validator) -> None:
    meta = assert_valid_run(host_run / "results.jsonl", validator)[0]
    assert meta["environment"].get("NCCL_DEBUG") == "WARN"
    assert "UNRELATED_VARIABLE" not in meta["environment"]
    assert meta["options"]["quick"] is True
    assert meta["engine"]["backends"]["host"]["built"] is True
    assert meta["launcher"]["kind"] == "none"
    assert meta["command_line"][1:3] == ["run", "--quick"]


def test_end_counts_match_the_records(host_run: Path, validator) -> None:
    records = assert_valid_run(host_run / "results.jsonl", validator)
    end = records[-1]
    types = [r["type"] for r in records]
    assert end["status"] == "complete"
    assert (end["results"], end["skipped"], end["errors"]) == (types.count("result"), types.count("skip"), types.count("error"))
    assert end["wall_s"] > 0


def test_engine_log_has_the_command(host_run: Path) -> None:
    log = (host_run / "engine.log").read_text()
    assert "commatlas-engine run --out" in log and "--progress json" in log


def test_summary_is_printed(engine_path: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--quick", "--only", "reference.harness_overhead", "--out", str(tmp_path / "r"),
                   env={"COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    # The harness timing itself moves nothing: the summary says there is no map, in one line.
    assert "No map: none of the 1 result(s) moves bytes between places" in done.stdout
    assert f"results: {tmp_path / 'r' / 'results.jsonl'}" in done.stdout


def test_results_say_how_sampling_stopped_and_what_each_point_cost(host_run: Path, validator) -> None:
    """Every result states its precision target, the interval reached and why it
    stopped; the end record sums the points' costs per benchmark."""
    records = assert_valid_run(host_run / "results.jsonl", validator)
    results = [r for r in records if r["type"] == "result"]
    for r in results:
        timing = r["timing"]
        assert timing["precision_target"] == 0.005
        assert timing["stop_reason"] in ("precision", "budget", "max_samples")
        if timing["stop_reason"] == "precision":
            assert timing["precision_reached"] <= 0.005
        assert r["cost"]["wall_s"] >= r["cost"]["timed_s"] > 0
    end = records[-1]
    assert sum(end["stop_reasons"].values()) == len(results)
    for key, entry in end["benchmarks"].items():
        mine = [r for r in results if r["benchmark"] == key]
        assert entry["points"] == len(mine)
        assert entry["wall_s"] == pytest.approx(sum(r["cost"]["wall_s"] for r in mine), abs=0.01)
        assert 0 < entry["timed_share"] <= 1
    # The whole command, interpreter start included: at least what the points took.
    assert end["wall_s"] >= sum(e["wall_s"] for e in end["benchmarks"].values())


def test_a_chase_is_walked_whole_and_confirmed_in_its_own_chains(engine_path: Path, tmp_path: Path, validator) -> None:
    """The chase prepares a fresh chain at every size: each size's chain is kept for its
    confirmation, so every point gets a verdict (never "unchecked"), and the chain was walked
    before the warm-up (timing.warmup.lap, all of it at these sizes)."""
    out = tmp_path / "chase"
    done = run_cli("run", "--only", "host.pointer_chase", "--sizes", "4K,64K", "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    records = assert_valid_run(out / "results.jsonl", validator)
    results = [r for r in records if r["type"] == "result"]
    verdicts = {r["bytes"]: r["stability"]["verdict"] for r in records if r["type"] == "stability"}
    assert sorted(verdicts) == sorted(r["bytes"] for r in results) == [4096, 65536]
    assert set(verdicts.values()) <= {"repeatable", "unstable"}, verdicts
    assert all(r["timing"]["warmup"]["lap"] == 1 for r in results)


def test_fixed_budget_mode_is_reachable(engine_path: Path, tmp_path: Path, validator) -> None:
    out = tmp_path / "fixed"
    done = run_cli("run", "--only", "host.memcpy", "--sizes", "4096,64K", "--precision", "off", "--time-budget", "0.01",
                   "--threads", "1", "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    results = [r for r in assert_valid_run(out / "results.jsonl", validator) if r.get("type") == "result"]
    assert results
    for r in results:
        assert r["timing"]["stop_reason"] == "fixed"
        assert r["timing"]["precision_target"] is None
        assert r["timing"]["batches"] == 1
    # Largest size first: the variant is prepared once at 64 KiB and 4 KiB runs inside it.
    assert [r["bytes"] for r in results] == [65536, 4096]


def test_wall_time_counts_the_command_not_what_ran_before_in_its_process(engine_path: Path, tmp_path: Path) -> None:
    # `bash -c '... && commatlas run'` runs commatlas in the shell's own process: what the shell
    # did before (here a 5 s sleep) is not part of the run. Against the same run without it.
    def wall_s(before: str, out: Path) -> float:
        script = (f"{before}exec {shlex.quote(sys.executable)} -m commatlas run --quick "
                  f"--only reference.harness_overhead --out {shlex.quote(str(out))}")
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "COMMATLAS_ENGINE": str(engine_path)})
        assert done.returncode == 0, done.stderr
        return read_lines(out / "results.jsonl")[-1]["wall_s"]

    alone, after_sleep = wall_s("", tmp_path / "a"), wall_s("sleep 5 && ", tmp_path / "b")
    assert 0 < after_sleep < alone + 2.5, (alone, after_sleep)


def test_report_writer_is_loaded_while_the_engine_answers_not_beside_a_measurement(engine_path: Path,
                                                                                  tmp_path: Path) -> None:
    # The writer's import (matplotlib) is done before the first phase starts, in a thread that has
    # ended by then: it overlaps the engine's start-up queries, never a measurement. A fresh process,
    # so that no earlier test has imported the writer already.
    script = f"""
import sys, threading
import commatlas.cli as cli
import commatlas.run.execute as execute
seen = []
original = execute.run_phase
def watched(*args, **kwargs):
    seen.append(("commatlas.report.render" in sys.modules,
                 any(t.name == "commatlas-report-import" for t in threading.enumerate())))
    return original(*args, **kwargs)
execute.run_phase = watched
status = cli.main(["run", "--quick", "--only", "reference.harness_overhead", "--out", {str(tmp_path / 'run')!r}])
print("PHASES", seen)
sys.exit(status)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COMMATLAS_ENGINE": str(engine_path)})
    assert done.returncode == 0, done.stderr + done.stdout
    phases = eval(next(line for line in done.stdout.splitlines() if line.startswith("PHASES"))[len("PHASES"):])
    assert phases, done.stdout
    assert all(loaded and not loading for loaded, loading in phases), phases
    assert (tmp_path / "run" / "report.html").is_file()
