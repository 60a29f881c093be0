"""Every kind of bad input ends in one line `commatlas: error: ...` and exit status 2, before
anything runs or any run directory appears."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_one_line_error, fixture_json, read_lines, run_cli, write_fake_engine

# Problems the real engine (or the CLI in front of it) must refuse.
REAL_ENGINE_CASES = {
    "unknown benchmark": ["--only", "no.such.benchmark"],
    "unknown suite": ["--suite", "nosuchsuite"],
    "empty suite list": ["--suite", ","],
    "malformed size list": ["--sizes", "8:x"],
    "size list with a bad suffix": ["--sizes", "12Q"],
    "empty size list": ["--sizes", ""],
    "empty only list": ["--only", ""],
    "empty NUMA list": ["--numa", " "],
    "reversed size range": ["--sizes", "1M:8"],
    "size beyond memory": ["--sizes", "64T"],
    "NUMA node that does not exist": ["--numa", "4095"],
    "negative time budget": ["--time-budget", "-1"],
    "zero threads": ["--threads", "0"],
    "zero ranks": ["--ranks", "0"],
    "unknown option": ["--frobnicate"],
    "non-numeric ranks": ["--ranks", "two"],
}


@pytest.mark.parametrize("args", REAL_ENGINE_CASES.values(), ids=REAL_ENGINE_CASES.keys())
def test_bad_run_input_is_one_line_exit_2(engine_path: Path, tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "--quick", "--out", str(out), *args)
    assert_one_line_error(done)
    assert not out.exists(), "bad input must be refused before the run directory is made"


def test_engine_message_is_relayed(engine_path: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), "--numa", "4095")
    assert_one_line_error(done)
    assert "NUMA node 4095 does not exist" in done.stderr


def test_time_budget_states_its_limit(engine_path: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--quick", "--out", str(tmp_path / "r"), "--time-budget", "1e6")
    assert_one_line_error(done)
    assert "below 1000000" in done.stderr


def test_fraction_of_a_byte_is_refused_and_says_why(engine_path: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--quick", "--out", str(tmp_path / "r"), "--sizes", "1.3K")
    assert_one_line_error(done)
    assert "whole number of bytes" in done.stderr and "unknown unit" not in done.stderr


def test_fractional_size_naming_whole_bytes_is_accepted(engine_path: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), "--only", "reference.host_memcpy", "--sizes", "1.5K",
                   "--time-budget", "0.01")
    assert done.returncode == 0, done.stderr
    sizes = {r["bytes"] for r in read_lines(tmp_path / "r" / "results.jsonl") if r["type"] == "result"}
    assert sizes == {1536}


def test_unwritable_output_directory(engine_path: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = run_cli("run", "--quick", "--only", "reference.harness_overhead", "--out", str(blocker / "run"))
    assert_one_line_error(done)
    assert "cannot write the output directory" in done.stderr


def test_existing_results_are_never_appended_to(engine_path: Path, tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("{}\n")
    done = run_cli("run", "--quick", "--only", "reference.harness_overhead", "--out", str(tmp_path))
    assert_one_line_error(done)
    assert (tmp_path / "results.jsonl").read_text() == "{}\n"


@pytest.mark.parametrize("command", ["run", "list", "info", "topo"])
def test_missing_engine(tmp_path: Path, command: str) -> None:
    done = run_cli(command, env={"COMMATLAS_ENGINE": str(tmp_path / "nowhere" / "commatlas-engine")})
    assert_one_line_error(done)
    assert "COMMATLAS_ENGINE" in done.stderr


def test_no_command_prints_the_commands() -> None:
    done = run_cli()
    assert done.returncode == 2 and not done.stdout
    # Like --help: every command with its line, not only "the following arguments are required".
    for name in ("run", "list", "info", "topo", "report", "compare", "export"):
        assert f"\n    {name} " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# --- MPI asked for where it cannot be had: a fake engine built without MPI ------------------------

@pytest.fixture
def host_only_engine(tmp_path: Path) -> dict[str, str]:
    engine = write_fake_engine(tmp_path, fixture_json("info_host_only.json"), fixture_json("list_host_only.json"), None)
    return {"COMMATLAS_ENGINE": str(engine)}


MPI_WITHOUT_BACKEND = {
    "suite mpi": ["--suite", "mpi"],
    "suite mpi-gpu": ["--suite", "mpi-gpu"],
    "ranks": ["--ranks", "4"],
    "launcher": ["--launcher", "srun -N 2"],
    "only mpi.*": ["--only", "mpi.*"],
}


@pytest.mark.parametrize("args", MPI_WITHOUT_BACKEND.values(), ids=MPI_WITHOUT_BACKEND.keys())
def test_mpi_without_mpi_backend(host_only_engine: dict[str, str], tmp_path: Path, args: list[str]) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), *args, env=host_only_engine)
    assert_one_line_error(done)
    assert "MPI backend" in done.stderr
    assert "no MPI implementation found" in done.stderr, "the reason the backend is missing is passed on"


def test_gpu_suite_without_cuda_backend(host_only_engine: dict[str, str], tmp_path: Path) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), "--suite", "gpu", env=host_only_engine)
    assert_one_line_error(done)
    assert "cuda backend" in done.stderr


# --- rank counts a benchmark cannot use ------------------------------------------------------------

@pytest.fixture
def mpi_engine(tmp_path: Path) -> dict[str, str]:
    engine = write_fake_engine(tmp_path, fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json"), None)
    return {"COMMATLAS_ENGINE": str(engine)}


def test_one_rank_for_mpi_benchmarks(mpi_engine: dict[str, str], tmp_path: Path) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), "--only", "mpi.*", "--ranks", "1", env=mpi_engine)
    assert_one_line_error(done)
    assert "mpi.pingpong needs 2 ranks" in done.stderr


def test_too_many_ranks_for_a_two_rank_benchmark(mpi_engine: dict[str, str], tmp_path: Path) -> None:
    done = run_cli("run", "--out", str(tmp_path / "r"), "--only", "mpi.pingpong", "--ranks", "3", env=mpi_engine)
    assert_one_line_error(done)
    assert "needs 2 ranks" in done.stderr


def test_one_rank_with_the_real_engine(engine_path: Path, engine_benchmarks, tmp_path: Path) -> None:
    if not any(b["suite"] == "mpi" for b in engine_benchmarks):
        pytest.skip("this engine has no MPI benchmarks")
    done = run_cli("run", "--out", str(tmp_path / "r"), "--suite", "mpi", "--ranks", "1")
    assert_one_line_error(done)
    assert "--ranks 1" in done.stderr
