"""How a run is split into phases on machines this one is not (fake engines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commatlas.errors import UsageError
from commatlas.run.execute import RunOptions, plan_run
from commatlas.run.launcher import Launcher
from commatlas.run.selection import Selection
from conftest import assert_one_line_error, fixture_json, read_lines, run_cli, write_fake_engine


def options(**changes) -> RunOptions:
    base = dict(selection=Selection(None, (), ()), sizes=None, time_budget=None, quick=True, threads=None,
                numa=None, watchdog=None, ranks=None, launcher=None, out=None)
    return RunOptions(**{**base, **changes})


@pytest.fixture
def mpi_world():
    return fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json")


def test_default_run_on_a_4_gpu_node_uses_one_rank_per_gpu(mpi_world, monkeypatch) -> None:
    info, benchmarks = mpi_world
    monkeypatch.setattr("commatlas.run.execute.find_launcher",
                        lambda ranks, text: Launcher("openmpi", ("mpiexec", "-n", str(ranks)), ranks))
    plan = plan_run(options(), info, fixture_json("topo_4xh200.json"), benchmarks)
    single, mpi = plan.phases
    assert single.launcher is None and set(single.keys) == {"host.memcpy", "reference.harness_overhead"}
    assert set(mpi.keys) == {"mpi.pingpong", "mpi.allreduce"}
    assert mpi.launcher.ranks == 4
    command = mpi.command(type("E", (), {"path": Path("/e")})(), Path("/r.jsonl"), ["--quick"])
    assert command[:4] == ["mpiexec", "-n", "4", "/e"]
    assert command[4:6] == ["run", "--mpi"] and command[-1] == "--quick"


def test_without_gpus_the_mpi_phase_has_two_ranks(mpi_world, monkeypatch) -> None:
    info, benchmarks = mpi_world
    monkeypatch.setattr("commatlas.run.execute.find_launcher", lambda ranks, text: Launcher("mpich", ("mpiexec", "-n", str(ranks)), ranks))
    plan = plan_run(options(), info, {"gpus": [], "reason": "none"}, benchmarks)
    assert plan.phases[-1].launcher.ranks == 2


def test_only_host_benchmarks_means_no_mpi_phase(mpi_world) -> None:
    info, benchmarks = mpi_world
    plan = plan_run(options(selection=Selection(("host",), (), ())), info, None, benchmarks)
    assert len(plan.phases) == 1 and plan.launcher["kind"] == "none"


def test_exclude_removes_benchmarks(mpi_world) -> None:
    info, benchmarks = mpi_world
    plan = plan_run(options(selection=Selection(("host",), (), ("reference.*",))), info, None, benchmarks)
    assert plan.phases[0].keys == ("host.memcpy",)


def test_excluding_everything_is_bad_input(mpi_world) -> None:
    info, benchmarks = mpi_world
    with pytest.raises(UsageError, match="matches no benchmark"):
        plan_run(options(selection=Selection(("host",), (), ("*",))), info, None, benchmarks)


def test_default_run_without_mpiexec_runs_the_rest(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json"), None)
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    out = tmp_path / "run"
    done = run_cli("run", "--out", str(out), env={"COMMATLAS_ENGINE": str(engine), "PATH": str(empty_path)})
    assert done.returncode == 0, done.stderr
    assert "leaves out mpi: no mpiexec" in done.stderr
    records = read_lines(out / "results.jsonl")
    assert records[0]["launcher"]["kind"] == "none" and "no mpiexec" in records[0]["launcher"]["reason"]
    assert records[-1]["status"] == "complete"


def test_asking_for_mpi_without_mpiexec_is_bad_input(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json"), None)
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    done = run_cli("run", "--suite", "mpi", "--out", str(tmp_path / "r"),
                   env={"COMMATLAS_ENGINE": str(engine), "PATH": str(empty_path)})
    assert_one_line_error(done)
    assert "no mpiexec" in done.stderr


def test_default_suites_follow_the_machine() -> None:
    from commatlas.run.selection import default_suites

    built = {name: {"built": True} for name in ("host", "cuda", "nccl", "mpi")}
    four_gpus = fixture_json("topo_4xh200.json")
    assert default_suites({"backends": built}, four_gpus) == ("host", "gpu", "nccl", "mpi", "mpi-gpu")
    # Single-process NCCL is its own suite: without NCCL it goes, the GPU copies stay.
    without_nccl = {**built, "nccl": {"built": False, "reason": "no NCCL"}}
    assert default_suites({"backends": without_nccl}, four_gpus) == ("host", "gpu", "mpi", "mpi-gpu")
    assert default_suites({"backends": built}, {"gpus": []}) == ("host", "mpi")


def test_an_amd_build_counts_as_the_gpu_backend() -> None:
    from commatlas.run.selection import check_suites, default_suites, missing_backends

    # What the HIP engine's info says (tests/test_hip_build.py checks the real one): hip built, cuda not.
    hip = {"backends": {"host": {"built": True}, "hip": {"built": True}, "mpi": {"built": True},
                        "cuda": {"built": False, "reason": "this build is for HIP (COMMATLAS_WITH_HIP)"},
                        "nccl": {"built": False, "reason": "rccl.h or librccl not found"}}}
    four_gpus = fixture_json("topo_4xh200.json")
    assert missing_backends("gpu", hip) == [] and missing_backends("mpi-gpu", hip) == []
    assert missing_backends("nccl", hip) == ["nccl"]
    assert default_suites(hip, four_gpus) == ("host", "gpu", "mpi", "mpi-gpu")
    check_suites(("gpu",), [{"key": "gpu.copy_ce", "suite": "gpu", "runnable": True}], hip, four_gpus)


# --- the OSU-method points: listed, and selected like any benchmark ------------------------------

@pytest.fixture
def with_osu_reference(tmp_path: Path) -> Path:
    """An engine with the OSU-method reference program installed beside it."""
    engine = tmp_path / "commatlas-engine"
    engine.write_text("")
    (tmp_path / "commatlas-osu-ref").write_text("")
    return engine


def test_osu_points_are_selected_by_only_and_bring_what_they_check(mpi_world, with_osu_reference, monkeypatch) -> None:
    from commatlas.analysis.osu import with_references

    info, benchmarks = mpi_world
    benchmarks = with_references(benchmarks, with_osu_reference)
    assert "reference.osu_latency" in [b["key"] for b in benchmarks]
    monkeypatch.setattr("commatlas.run.execute.find_launcher", lambda ranks, text: Launcher("openmpi", ("mpiexec",), ranks))
    plan = plan_run(options(selection=Selection(None, ("reference.osu*",), ())), info, None, benchmarks)
    (mpi,) = plan.phases
    # The engine measures mpi.pingpong (the sizes the reference then measures); the reference runs after.
    assert mpi.keys == ("mpi.pingpong",) and mpi.references == ("reference.osu_latency",)
    assert any(line.startswith("runs mpi: 2 benchmarks") for line in plan.suites), plan.suites
    # Left out with --exclude: the engine benchmark runs, its reference does not.
    plan = plan_run(options(selection=Selection(("mpi",), (), ("reference.osu*",))), info, None, benchmarks)
    assert plan.phases[0].references == () and "mpi.pingpong" in plan.phases[0].keys


def test_list_shows_the_osu_points(with_osu_reference, tmp_path: Path) -> None:
    engine = write_fake_engine(with_osu_reference.parent, fixture_json("info_with_mpi.json"),
                               fixture_json("list_with_mpi.json"), None)
    (engine.parent / "commatlas-osu-ref").write_text("")
    done = run_cli("list", env={"COMMATLAS_ENGINE": str(engine), "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert "reference.osu_latency" in done.stdout


def test_a_pattern_leaves_out_a_suite_that_cannot_run_here(monkeypatch) -> None:
    """`--tune mpi` (its preset selects "mpi.*") on a machine without a GPU: the mpi-gpu benchmarks
    it matches are left out with the reason, not announced and then skipped point by point.
    A real engine's list and topology on such a machine (CUDA and MPI built, no driver)."""
    monkeypatch.setattr("commatlas.run.execute.find_launcher",
                        lambda ranks, text: Launcher("openmpi", ("mpiexec", "-n", str(ranks)), ranks))
    info, benchmarks = fixture_json("info_cuda_no_gpu.json"), fixture_json("list_cuda_no_gpu.json")
    plan = plan_run(options(selection=Selection(None, ("mpi.*",), ())), info,
                    fixture_json("topo_no_gpu.json"), benchmarks)
    keys = {k for phase in plan.phases for k in phase.keys}
    assert keys and all(not k.startswith(("mpi.staged.", "mpi.gpu_aware.")) for k in keys), keys
    assert not any(line.startswith("runs mpi-gpu") for line in plan.suites), plan.suites
    assert any(line.startswith("leaves out") and "mpi-gpu" in line and "no GPU" in line for line in plan.suites), plan.suites
    # Only GPU benchmarks named: refused in one line, before anything runs.
    with pytest.raises(UsageError, match="nothing selected can run here: mpi-gpu: no GPU"):
        plan_run(options(selection=Selection(None, ("mpi.staged.*",), ())), info, fixture_json("topo_no_gpu.json"),
                 benchmarks)


def gpu_machine_list() -> list[dict]:
    """The real list of an engine built with CUDA, NCCL and MPI (tests/fixtures/list_cuda_no_gpu.json),
    every benchmark runnable, as on the GPU machines where the committed quick runs measured them."""
    listed = fixture_json("list_cuda_no_gpu.json")
    listed = listed if isinstance(listed, list) else listed["benchmarks"]
    return [{**b, "runnable": True, "reason": ""} for b in listed]


def test_quick_measures_nccl_once_where_the_mpi_phase_has_it(monkeypatch) -> None:
    monkeypatch.setattr("commatlas.run.execute.find_launcher",
                        lambda ranks, text: Launcher("openmpi", ("mpiexec", "-n", str(ranks)), ranks))
    info, topology, benchmarks = fixture_json("info_h100x2_cuda_mpi.json"), fixture_json("topo_4xh200.json"), \
        gpu_machine_list()
    one_process_nccl = {b["key"] for b in benchmarks if b["suite"] == "nccl"}
    assert one_process_nccl

    quick = plan_run(options(), info, topology, benchmarks)
    single, mpi = quick.phases[0], quick.phases[-1]
    assert single.launcher is None and not one_process_nccl & set(single.keys), single.keys
    assert any(k.startswith("nccl.") for k in mpi.keys), mpi.keys
    assert "gpu.copy_ce" in single.keys
    assert not any(line.startswith("runs nccl") for line in quick.suites), quick.suites
    assert any(line.startswith("leaves out nccl: --quick measures NCCL with one rank per GPU")
               for line in quick.suites), quick.suites

    full = plan_run(options(quick=False), info, topology, benchmarks)
    assert one_process_nccl <= set(full.phases[0].keys)
    # Named, it runs.
    named = plan_run(options(selection=Selection(None, ("nccl.single.allreduce", "nccl.allreduce"), ())), info,
                     topology, benchmarks)
    assert "nccl.single.allreduce" in named.phases[0].keys
    by_suite = plan_run(options(selection=Selection(("nccl", "mpi-gpu"), (), ())), info, topology, benchmarks)
    assert one_process_nccl <= set(by_suite.phases[0].keys)
    # Without NCCL in the MPI phase, the one-process suite is the only NCCL figure: it stays.
    mpi_nccl = tuple(b["key"] for b in benchmarks if b["suite"] == "mpi-gpu" and b["interface"] == "nccl")
    no_mpi_nccl = plan_run(options(selection=Selection(None, (), mpi_nccl)), info, topology, benchmarks)
    assert one_process_nccl <= set(no_mpi_nccl.phases[0].keys)


def test_quick_without_a_launcher_keeps_one_process_nccl(monkeypatch) -> None:
    def no_launcher(ranks, text):
        raise UsageError("no MPI launcher found (mpiexec, mpirun, srun)")
    monkeypatch.setattr("commatlas.run.execute.find_launcher", no_launcher)
    benchmarks = gpu_machine_list()
    plan = plan_run(options(), fixture_json("info_h100x2_cuda_mpi.json"), fixture_json("topo_4xh200.json"), benchmarks)
    assert len(plan.phases) == 1
    assert {b["key"] for b in benchmarks if b["suite"] == "nccl"} <= set(plan.phases[0].keys)
