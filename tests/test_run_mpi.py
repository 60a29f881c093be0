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
    # Not --quick: a smoke run leaves the OSU-method reference out, and this run checks it.
    done = run_cli("run", "--time-budget", "0.02", "--suite", "mpi", "--ranks", str(RANKS), "--sizes", "8,64K",
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
    from commatlas.analysis import osu

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
    # Every line it printed: each point once per pass (osu.PASSES), the second pass its confirmation.
    lines = len(references) * osu.PASSES
    assert shown and f"{lines}/{lines}" in shown[-1] and "?" not in shown[-1], shown
    confirmed = {r["point"] for r in records if r["type"] == "stability"}
    assert all(r["point"] in confirmed for r in references), "every reference point has its second pass's verdict"


def test_collectives_carry_osu_average_next_to_the_max(mpi_run: Path, validator) -> None:
    records = assert_valid_run(mpi_run / "results.jsonl", validator)
    collectives = [r for r in records if r["type"] == "result" and "collective" in r]
    if not collectives:
        pytest.skip("this engine has no MPI collectives yet")
    for r in collectives:
        c = r["collective"]
        assert c["max_over_ranks_latency_us"] == pytest.approx(r["latency_us"], rel=1e-9)
        assert c["osu_avg_latency_us"] > 0, r["benchmark"]


def test_records_say_which_cpus_each_rank_could_run_on(engine_path: Path, engine_info, tmp_path: Path,
                                                      validator) -> None:
    """The same ping-pong launched with each rank bound to a core and unbound: the records tell the
    two apart (a 1-byte ping-pong between unbound ranks moved 2x between passes on a VM)."""
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")
    import json
    import os
    import shutil

    if "Open MPI" not in engine_info["backends"]["mpi"].get("library_version", ""):
        pytest.skip("the binding options below are Open MPI's")
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs 2 CPUs to bind 2 ranks apart")
    cpus = {}
    for binding in ("core", "none"):
        out = tmp_path / binding
        launcher = f"{shutil.which('mpiexec')} --allow-run-as-root -n 2 --bind-to {binding}"
        done = run_cli("run", "--suite", "mpi", "--only", "mpi.pingpong", "--sizes", "8", "--quick",
                       "--launcher", launcher, "--out", str(out), timeout=300)
        assert done.returncode == 0, done.stderr + done.stdout
        (result,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()
                     if '"type":"result"' in line.replace(" ", "")]
        # --quick is a smoke run: the OSU-method reference, a check of the harness, is left out.
        assert "reference.osu_" not in (out / "results.jsonl").read_text()
        validator.validate(result)
        cpus[binding] = result["placement"]["cpus"]
    # Bound: one CPU each, not the same one. Unbound: each may run on every CPU this test may.
    assert all(c.isdigit() for c in cpus["core"]) and len(set(cpus["core"])) == 2, cpus
    assert cpus["none"] == [cpulist(allowed)] * 2, cpus
    # The report's machine section says it.
    html = (tmp_path / "core" / "report.html").read_text()
    assert f"CPUs each rank could run on</th><td>rank 0: {cpus['core'][0]}, rank 1: {cpus['core'][1]}<" in html


def cpulist(cpus: list[int]) -> str:
    """The kernel's cpulist text of an ascending list: 0-3,8."""
    runs: list[list[int]] = []
    for c in cpus:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
