"""A real single-process run: the run directory holds meta, the engine's records and end, and
every line validates against schema/results.schema.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_valid_run, run_cli

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
    # A reference loop is in no movement: the summary says the record has none to map (the engine
    # of this build declares none yet) or maps nothing; either way it says so in one line.
    assert "declare no movement" in done.stdout or "Best interface" in done.stdout
    assert f"results: {tmp_path / 'r' / 'results.jsonl'}" in done.stdout
