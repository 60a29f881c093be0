"""A copy that did not happen never becomes a bandwidth.

COMMATLAS_TEST_SKIP_MOVE=1 makes the real memcpy and MPI calls do nothing inside timed batches,
while the untimed probe and warm-up still move the bytes: exactly the fault of a destination
poisoned only once at setup. Every point must then end as an error record ("data check
failed"), never a result with a bandwidth. Without the switch the same points are results that
say how they were verified. (The CUDA, IPC and NCCL paths: scripts/device/planted_noop.sh.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_run, have_mpiexec, run_cli

PLANTED = {"COMMATLAS_TEST_SKIP_MOVE": "1"}
# 1 B: no chance match with the poison; 64 KiB: several words, the vector paths of memcpy.
SIZES = "1,64K"
HOST = "host.memcpy,reference.host_memcpy"
MPI = "mpi.*,reference.mpi_pingpong,pattern.*"


def run_records(out: Path, validator, *args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    done = run_cli("run", *args, "--sizes", SIZES, "--time-budget", "0.01", "--out", str(out), env=env, timeout=600)
    assert "Traceback" not in done.stderr, done.stderr
    assert (out / "results.jsonl").exists(), done.stderr + done.stdout
    return assert_valid_run(out / "results.jsonl", validator)


def assert_every_point_failed(records: list[dict[str, Any]], benchmarks: set[str]) -> None:
    assert not [r for r in records if r["type"] == "result" and r["benchmark"] in benchmarks], \
        "a timed loop that moved nothing became a result"
    errors = [r for r in records if r["type"] == "error"]
    assert {r["benchmark"] for r in errors} == benchmarks, "every benchmark ran and failed at some size"
    assert all(r["message"].startswith("data check failed") for r in errors), [r["message"] for r in errors]
    assert not any("bandwidth_gbps" in r for r in errors)


def assert_verified_by_bytes(records: list[dict[str, Any]], benchmarks: set[str]) -> None:
    # The CLI adds the OSU-method reference's records after an MPI phase (reference.osu_*, its own
    # program: no switch, verified "bytes_once"); the engine's benchmarks are what is checked here.
    results = [r for r in records if r["type"] == "result" and r["benchmark"] in benchmarks]
    assert {r["benchmark"] for r in results} == benchmarks, "every benchmark ran at some size"
    assert not [r for r in records if r["type"] == "error"]
    for r in results:
        assert r["verified"]["method"] == "bytes", r["benchmark"]
        assert r["verified"]["bytes_checked"] > 0


@pytest.fixture(scope="module")
def mpi_ready(engine_info, engine_benchmarks) -> None:
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")


def test_host_memcpy_that_moved_nothing_is_an_error(engine_path: Path, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "planted", validator, "--suite", "host", "--only", HOST, env=PLANTED)
    assert_every_point_failed(records, {"host.memcpy", "reference.host_memcpy"})


def test_host_memcpy_without_the_switch_is_verified_by_bytes(engine_path: Path, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "real", validator, "--suite", "host", "--only", HOST)
    assert_verified_by_bytes(records, {"host.memcpy", "reference.host_memcpy"})


def test_records_that_check_something_else_say_what(engine_path: Path, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "other", validator, "--suite", "host", "--only",
                          "reference.harness_overhead,host.pointer_chase", env=PLANTED)
    methods = {r["benchmark"]: r["verified"] for r in records if r["type"] == "result"}
    assert methods["reference.harness_overhead"] == {"ok": True, "bytes_checked": 0, "method": "none"}
    assert methods["host.pointer_chase"]["method"] == "chain"


def mpi_benchmarks(engine_benchmarks: list[dict[str, Any]]) -> set[str]:
    return {b["key"] for b in engine_benchmarks if b["suite"] == "mpi"}


def test_mpi_calls_that_moved_nothing_are_errors(mpi_ready, engine_benchmarks, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "planted", validator, "--suite", "mpi", "--only", MPI, "--ranks", "2", env=PLANTED)
    assert_every_point_failed(records, mpi_benchmarks(engine_benchmarks))


def test_mpi_without_the_switch_is_verified_by_bytes(mpi_ready, engine_benchmarks, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "real", validator, "--suite", "mpi", "--only", MPI, "--ranks", "2")
    assert_verified_by_bytes(records, mpi_benchmarks(engine_benchmarks))


def test_schema_refuses_a_bytes_check_of_nothing(engine_path: Path, tmp_path: Path, validator) -> None:
    records = run_records(tmp_path / "schema", validator, "--suite", "host", "--only", "host.memcpy")
    result = next(r for r in records if r["type"] == "result")
    assert not list(validator.iter_errors(result))
    result["verified"]["bytes_checked"] = 0
    assert list(validator.iter_errors(result)), "method bytes with 0 bytes checked must not validate"
    result["verified"]["method"] = "none"
    assert not list(validator.iter_errors(result))
    del result["verified"]["method"]
    assert list(validator.iter_errors(result)), "every result says how it was verified"


def test_methods_are_one_list_in_schema_and_docs() -> None:
    import json
    import re

    from conftest import REPO, SCHEMA

    schema = json.loads(SCHEMA.read_text())
    in_schema = schema["$defs"]["result"]["properties"]["verified"]["properties"]["method"]["enum"]
    docs = (REPO / "docs" / "results-format.md").read_text()
    table = docs.split("### Verification", 1)[1].split("\n\n")[2]
    in_docs = re.findall(r"^\| `(\w+)` \|", table.split("| --- |", 1)[1], flags=re.M)
    assert in_docs == in_schema
