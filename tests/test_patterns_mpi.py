"""The application patterns on host MPI with 4 ranks (a 2x2 and a 2x2x1 process grid, so every
rank meets the same neighbour on two faces): each pattern runs and checks its data, and a wrong
neighbour or a missing message planted inside the pattern code (COMMATLAS_PATTERN_FAULT) fails
that check instead of producing a number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_run, have_mpiexec, run_cli

RANKS = 4
PATTERNS = ("pattern.halo2d.mpi", "pattern.halo3d.mpi", "pattern.neighbor.mpi", "pattern.bucketed_allreduce.mpi")


@pytest.fixture(scope="module")
def pattern_engine(engine_info, engine_benchmarks) -> None:
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")
    if not all(any(b["key"] == p for b in engine_benchmarks) for p in PATTERNS):
        pytest.skip("this engine has no host-MPI patterns")




@pytest.fixture(scope="module")
def clean_run(pattern_engine, tmp_path_factory, validator) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("patterns") / "run"
    done = run_cli("run", "--quick", "--only", ",".join(PATTERNS), "--ranks", str(RANKS), "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout + (out / "engine.log").read_text()
    return assert_valid_run(out / "results.jsonl", validator)


def test_every_pattern_runs_and_checks_its_data(clean_run) -> None:
    results = [r for r in clean_run if r["type"] == "result"]
    assert {r["benchmark"] for r in results} == set(PATTERNS)
    for r in results:
        assert r["category"] == "pattern" and r["ranks"] == RANKS
        assert r["verified"]["ok"] and r["verified"]["bytes_checked"] > 0
        assert r["timing"]["max_over_ranks"] is True, "a step lasts until its slowest rank is done"
        assert r["latency_includes"]
    grids = {r["benchmark"]: r["params"].get("process_grid") for r in results}
    assert grids["pattern.halo2d.mpi"] == "2x2"
    assert grids["pattern.halo3d.mpi"] == "2x2x1"
    # 4 faces of a 256x256 subdomain of doubles (512 KiB): 4 x 2 KiB sent per step
    halo2d = next(r for r in results if r["benchmark"] == "pattern.halo2d.mpi")
    assert halo2d["bytes"] == 512 * 1024 and halo2d["bytes_per_op"] == 4 * 256 * 8


def test_overlap_variant_without_gpu_compute_says_why(clean_run, engine_info) -> None:
    overlap = [r for r in clean_run if r.get("benchmark") == "pattern.bucketed_allreduce.mpi"
               and r["type"] in ("result", "skip", "error") and r["params"]["compute_us"] > 0]
    assert overlap, "the overlap variant is always planned"
    if not engine_info["backends"].get("cuda", {}).get("built"):
        assert all(r["type"] == "skip" and "without CUDA" in r["reason"] for r in overlap)


@pytest.mark.parametrize("fault,caught", [
    ("wrong_neighbour", ("pattern.halo2d.mpi", "pattern.halo3d.mpi", "pattern.neighbor.mpi")),
    ("missing_message", PATTERNS),
])
def test_planted_fault_fails_the_data_check(pattern_engine, tmp_path: Path, validator, fault: str,
                                            caught: tuple[str, ...]) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "--quick", "--only", ",".join(caught), "--ranks", str(RANKS), "--sizes", "64K",
                   "--out", str(out), env={"COMMATLAS_PATTERN_FAULT": fault}, timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout + (out / "engine.log").read_text()
    records = assert_valid_run(out / "results.jsonl", validator)
    measured = [r for r in records if r["type"] in ("result", "error") and r["params"].get("compute_us", 0) == 0]
    assert {r["benchmark"] for r in measured} == set(caught)
    for r in measured:
        assert r["type"] == "error", f"{r['benchmark']} passed its data check with a {fault} planted"
        assert r["message"].startswith("data check failed")
    if fault == "missing_message":
        assert any("never received" in r["message"] for r in measured)
    else:
        assert any("expected neighbour rank" in r["message"] for r in measured)
