"""`commatlas list` and `commatlas info` show what the engine reports, readably."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import fixture_json, run_cli, write_fake_engine

WIDE = {"COLUMNS": "250"}


def test_list_names_every_benchmark(engine_path: Path, engine_benchmarks) -> None:
    done = run_cli("list", env=WIDE)
    assert done.returncode == 0, done.stderr
    for benchmark in engine_benchmarks:
        assert benchmark["key"] in done.stdout
    assert "reference.harness_overhead" in done.stdout


def test_list_at_80_columns_cuts_no_cell(engine_path: Path) -> None:
    done = run_cli("list", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "…" not in done.stdout and max(len(line) for line in lines) <= 80, lines


def test_list_json_is_the_engine_list_the_osu_method_points_and_the_torch_suite(engine_path: Path,
                                                                               engine_benchmarks) -> None:
    done = run_cli("list", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    # The OSU-method points run in their own program (commatlas-osu-ref), the torch suite in
    # PyTorch's processes: not in the engine.
    assert [b for b in listed if not b.get("runs_in")] == engine_benchmarks
    assert all(b["key"].startswith("reference.osu_") and b["reference_of"] in {e["key"] for e in engine_benchmarks}
               for b in listed if b.get("runs_in") and b["suite"] != "torch")
    assert {b["key"] for b in listed if b["suite"] == "torch"} == {"torch.copy", "torch.allreduce", "torch.allgather",
                                                                  "torch.bandwidth", "torch.pingpong", "torch.ddp_step",
                                                                  "torch.ddp_allreduce"}


def test_list_says_why_a_benchmark_cannot_run_here(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json"), None)
    done = run_cli("list", env={"COMMATLAS_ENGINE": str(engine), **WIDE})
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if "mpi.pingpong" in line)
    assert "with MPI [1]" in row and "[1] runs under an MPI launcher" in done.stdout
    host_row = next(line for line in done.stdout.splitlines() if "host.memcpy" in line)
    assert "yes" in host_row and "explicit_copy" in host_row and "memcpy" in host_row


def test_info_shows_backends_and_why_not(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_host_only.json"), [], None)
    done = run_cli("info", env={"COMMATLAS_ENGINE": str(engine), **WIDE})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    cuda = next(line for line in lines if "│ cuda" in line)
    assert "no" in cuda and "no CUDA compiler (nvcc) found" in cuda
    assert any("Fake CPU (4 logical CPUs)" in line for line in lines)
    assert any("16 GiB total, 8 GiB available" in line for line in lines)


def test_info_real_engine(engine_path: Path, engine_info) -> None:
    done = run_cli("info", env=WIDE)
    assert done.returncode == 0, done.stderr
    assert engine_info["git_sha"] in done.stdout
    for name in engine_info["backends"]:
        assert name in done.stdout


def test_info_records_what_each_mpi_rank_writes_on_its_gpu_first(engine_info) -> None:
    # The run's meta record carries this info (engine.process_state): every MPI rank's GPU writes
    # device memory when the job binds it, so that a benchmark run first reads as it does after
    # the job's other GPU benchmarks. An engine without MPI or without a GPU runtime binds no GPU.
    state = engine_info["process_state"]
    built = {name for name, backend in engine_info["backends"].items() if backend.get("built")}
    if not {"mpi"} <= built or not built & {"cuda", "hip"}:
        assert "rank_gpu_writes" not in state, state
        return
    writes = state["rank_gpu_writes"]
    assert writes["bytes"] >= 1 << 20 and writes["passes"] >= 1, writes
    assert f"{writes['passes']} x {writes['bytes'] >> 20} MiB" in writes["why"], writes
    assert "before the first benchmark" in writes["why"], writes
