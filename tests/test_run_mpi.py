"""A real two-rank MPI run through the launcher: records validate, and every collective's busbw
is its algbw times nccl-tests' factor for its operation and rank count."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_valid_run, have_mpiexec, run_cli

RANKS = 2


def bus_factor(operation: str, n: int) -> float:
    """nccl-tests' factors (doc/PERFORMANCE.md)."""
    if operation == "allreduce":
        return 2 * (n - 1) / n
    if operation in ("allgather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if operation in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise AssertionError(f"unknown collective operation {operation!r}")


@pytest.fixture(scope="module")
def mpi_run(engine_path: Path, engine_info, engine_benchmarks, tmp_path_factory) -> Path:
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")
    if not any(b["suite"] == "mpi" for b in engine_benchmarks):
        pytest.skip("this engine has no benchmarks in the mpi suite")
    out = tmp_path_factory.mktemp("mpi") / "run"
    done = run_cli("run", "--quick", "--suite", "mpi", "--ranks", str(RANKS), "--sizes", "8,64K",
                   "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout + (out / "engine.log").read_text()
    (out.parent / "terminal.txt").write_text(done.stdout + done.stderr)  # what the user saw
    return out


def test_mpi_records_validate(mpi_run: Path, validator) -> None:
    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    results = [r for r in records if r["type"] == "result"]
    assert results, "two ranks can run the mpi suite"
    assert all(r["ranks"] == RANKS and r["suite"] == "mpi" for r in results)
    assert records[0]["launcher"]["kind"] in ("openmpi", "mpich", "unknown")
    assert records[0]["launcher"]["ranks"] == RANKS
    assert records[-1]["status"] == "complete"


def test_collectives_busbw_is_algbw_times_factor(mpi_run: Path, validator) -> None:
    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    collectives = [r for r in records if r["type"] == "result" and "collective" in r]
    if not collectives:
        pytest.skip("this engine has no MPI collectives yet")
    for r in collectives:
        c = r["collective"]
        factor = bus_factor(c["operation"], r["ranks"])
        assert c["bus_factor"] == pytest.approx(factor, rel=1e-9), r["benchmark"]
        assert c["algbw_gbps"] == pytest.approx(r["bandwidth_gbps"], rel=1e-6)
        assert c["busbw_gbps"] == pytest.approx(c["algbw_gbps"] * factor, rel=1e-6)
        assert r["timing"]["max_over_ranks"] is True, "a collective's time is the slowest rank's"


def test_point_to_point_latency_says_what_it_includes(mpi_run: Path, validator) -> None:
    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    latencies = [r for r in records if r["type"] == "result" and r["metric"] == "latency"]
    assert all(r.get("latency_includes") for r in latencies)


def test_run_starts_the_osu_reference_at_the_engines_sizes(mpi_run: Path, validator) -> None:
    from commatlas import osu

    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    references = [r for r in records if r["type"] == "result" and r["benchmark"].startswith("reference.osu_")]
    measured = {(r["benchmark"], r["bytes"]) for r in records
                if r["type"] == "result" and r["benchmark"] in osu.CHECKED}
    assert {(r["params"]["reference_of"], r["bytes"]) for r in references} == measured
    rows = osu.comparison_rows(records)
    assert {(row.benchmark, row.bytes) for row in rows} == measured
    assert all(row.engine > 0 and row.reference > 0 and row.rounds == 1 for row in rows)
    # Its progress line counts what it ran (was "0/?": the reference prints no progress events).
    shown = [line for line in (mpi_run.parent / "terminal.txt").read_text().splitlines() if line.startswith("OSU method")]
    assert shown and f"{len(references)}/{len(references)}" in shown[-1] and "?" not in shown[-1], shown


def test_collectives_carry_osu_average_next_to_the_max(mpi_run: Path, validator) -> None:
    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    collectives = [r for r in records if r["type"] == "result" and "collective" in r]
    if not collectives:
        pytest.skip("this engine has no MPI collectives yet")
    for r in collectives:
        c = r["collective"]
        assert c["max_over_ranks_latency_us"] == pytest.approx(r["latency_us"], rel=1e-9)
        assert c["osu_avg_latency_us"] > 0, r["benchmark"]
