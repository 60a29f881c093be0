"""The torch suite: listed and selected like any suite, skipped with its reason where PyTorch or a GPU
is missing, and its measurements written by the engine (`commatlas-engine ingest`) into records the
reader takes exactly like the engine's. Where PyTorch imports (a CPU build is enough), the model
builds at GPT-2-small size and the distributed plumbing runs on gloo under mpiexec."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commatlas.io.engine import Engine
from commatlas.frameworks.torch import catalog, compare, suite, worker
from commatlas.run.launcher import Launcher
from commatlas.io.records import read_records
from commatlas.io.results import load_run
from commatlas.run.execute import RunOptions, plan_run
from commatlas.run.selection import Selection
from conftest import REPO, fixture_json, fixture_run, have_mpiexec, read_lines

# Real engine records from 2x H100: the copy engine's host -> GPU copies and NCCL (a rank per GPU),
# every record of those mechanisms in a default run (tests/fixtures/h100x2-steady-state).
H100 = fixture_run("h100x2-steady-state") / "default" / "results.jsonl"
HAVE_TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module")
def h100() -> list[dict]:
    return read_records(H100)  # the reader: params in today's names (host_allocator)


def engine_record(records: list[dict], benchmark: str, size: int, **params) -> dict:
    return next(r for r in records if r.get("type") == "result" and r["benchmark"] == benchmark and r["bytes"] == size
                and all(r["params"].get(k) == v for k, v in params.items()))


def torch_measurement(engine: dict, key: str, slower: float, mechanism: str, params: dict) -> dict:
    """The worker's line for the movement an engine record declares, its samples `slower` times the
    engine's (what the worker prints: worker.result's shape)."""
    movement = copy.deepcopy(engine["movement"])
    movement.pop("cache_resident", None)
    movement["mechanism"] = mechanism
    identity = worker.base(key, params, movement, engine["bytes"], engine["ranks"], None, {})
    return worker.result(identity, [s * slower for s in engine["samples_s"]], engine["bytes_per_op"], "CUDA events",
                         10, (True, engine["bytes"], ""), "bytes", "", engine["ranks"] > 1)


@pytest.fixture(scope="module")
def ingested(engine_path: Path, h100: list[dict]) -> list[dict]:
    copy_ce = engine_record(h100, "gpu.copy_ce", 1 << 20, path="h2d", host_allocator="pinned", engine_side="dst")
    allreduce = engine_record(h100, "nccl.allreduce", 64 << 10)
    return Engine(engine_path).ingested([
        torch_measurement(copy_ce, "torch.copy", 1.25, "torch", {"path": "h2d", "host_allocator": "pinned"}),
        torch_measurement(allreduce, "torch.allreduce", 2.0, "torch_nccl", {"launch": "rank_per_gpu"}),
    ])


def test_listing_says_why_it_cannot_run(monkeypatch) -> None:
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)
    entries = catalog.listed(gpus=2)
    assert {e["key"] for e in entries} == set(catalog.BY_KEY)
    assert all(not e["runnable"] and "PyTorch is not installed" in e["reason"] for e in entries)
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: object())
    assert all("no GPU visible" in e["reason"] for e in catalog.listed(gpus=0))
    assert all(e["runnable"] for e in catalog.listed(gpus=2))
    one = {e["key"]: e for e in catalog.listed(gpus=1)}
    assert one["torch.copy"]["runnable"] and "needs 2 GPUs" in one["torch.allreduce"]["reason"]


def test_not_in_the_default_run_and_said_so(monkeypatch) -> None:
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: object())
    info, benchmarks = fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json")
    monkeypatch.setattr("commatlas.run.execute.find_launcher",
                        lambda ranks, text: Launcher("openmpi", ("mpiexec", "-n", str(ranks)), ranks))
    topology = fixture_json("topo_4xh200.json")
    every = benchmarks + catalog.listed(gpus=4)
    base = dict(selection=Selection(None, (), ()), sizes=None, time_budget=None, quick=True, threads=None,
                numa=None, watchdog=None, ranks=None, launcher=None, out=None)
    plan = plan_run(RunOptions(**base), info, topology, every)
    # Not in the default run, and not said there: `commatlas list` shows it (an optional suite).
    assert plan.torch is None and not any("torch" in line for line in plan.suites), plan.suites
    asked = plan_run(RunOptions(**{**base, "selection": Selection(("torch",), (), ())}), info, topology, every)
    assert asked.torch is not None and set(asked.torch.keys) == set(catalog.BY_KEY)
    assert asked.phases == ()  # nothing of the engine's: the suite runs in PyTorch's own processes
    # One process per GPU under the engine's launcher, without Open MPI's binding to one core.
    assert asked.torch.launcher.ranks == 4 and asked.torch.launcher.prefix[:3] == ("mpiexec", "--bind-to", "none")
    assert any(line.startswith("runs torch: 7 benchmarks, copies in one process; torch.distributed") for line in asked.suites)
    # --suite all means the engine's suites: the optional one only by name (this fixture's engine
    # has no CUDA, so every GPU suite is taken as runnable here).
    monkeypatch.setattr("commatlas.run.selection.blocked_suites", lambda *a: {})
    everything = plan_run(RunOptions(**{**base, "selection": Selection(("all",), (), ())}), info, topology, every)
    assert everything.torch is None and everything.phases


def test_asking_for_it_without_pytorch_is_one_line(monkeypatch) -> None:
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)
    info, benchmarks = fixture_json("info_with_mpi.json"), fixture_json("list_with_mpi.json")
    from commatlas.errors import UsageError
    with pytest.raises(UsageError, match="suite 'torch' cannot run here: PyTorch is not installed"):
        plan_run(RunOptions(selection=Selection(("torch",), (), ()), sizes=None, time_budget=None, quick=True,
                            threads=None, numa=None, watchdog=None, ranks=None, launcher=None, out=None),
                 info, fixture_json("topo_4xh200.json"), benchmarks + catalog.listed(gpus=4))


def test_a_machine_without_pytorch_gets_skip_records(engine_path: Path, validator, tmp_path: Path) -> None:
    # The worker in an interpreter that cannot import torch (a folder named torch that fails).
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('planted: no torch here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO / "python")])}
    done = subprocess.run([sys.executable, "-m", suite.WORKER, "--part", "copy", "--keys", "torch.copy"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    measurements = [suite.measurement_of(line) for line in done.stdout.splitlines()]
    records = Engine(engine_path).ingested([m for m in measurements if m])
    (skip,) = records
    assert skip["type"] == "skip" and skip["benchmark"] == "torch.copy" and "planted: no torch here" in skip["reason"]
    assert not [e.message for e in validator.iter_errors(skip)]


def test_ingested_records_read_like_engine_records(ingested: list[dict], h100: list[dict], validator,
                                                   tmp_path: Path) -> None:
    copy_ce = engine_record(h100, "gpu.copy_ce", 1 << 20, path="h2d", host_allocator="pinned", engine_side="dst")
    torch_copy, torch_allreduce = ingested
    for r in ingested:
        assert not [e.message for e in validator.iter_errors(r)], r["point"]
    # The engine's statistics over the samples: the median of 1.25x the engine's samples.
    assert torch_copy["stats"]["median_s"] == pytest.approx(copy_ce["stats"]["median_s"] * 1.25, rel=1e-6)
    assert torch_copy["bandwidth_gbps"] == pytest.approx(copy_ce["bytes_per_op"] / torch_copy["stats"]["median_s"] / 1e9)
    assert torch_allreduce["collective"]["bus_factor"] == 1.0  # 2 ranks: 2(n-1)/n
    # The reader takes them like any engine record: same movement key, beside the copy engine.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lines = [h100[0], copy_ce, *ingested]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    run = load_run(run_dir)
    mechanisms = {r.benchmark: r.movement.mechanism for r in run.results}
    assert mechanisms == {"gpu.copy_ce": "copy_engine", "torch.copy": "torch", "torch.allreduce": "torch_nccl"}
    from commatlas.analysis.answers import move_key
    by = {r.benchmark: r for r in run.results}
    assert move_key(by["torch.copy"]) == move_key(by["gpu.copy_ce"])
    assert read_records(run_dir / "results.jsonl")[-1]["point"] == torch_allreduce["point"]


def test_the_report_says_what_pytorch_adds(ingested: list[dict], h100: list[dict]) -> None:
    records = [*h100, *ingested]
    rows = compare.framework_rows(records)
    by = {r.torch_benchmark: r for r in rows}
    assert set(by) == {"torch.copy", "torch.allreduce"}
    # Against the engine's best figure for the movement (here: the engine side that was fastest).
    assert by["torch.copy"].engine_benchmark == "gpu.copy_ce" and by["torch.copy"].ratio <= 1.25 + 1e-9
    assert by["torch.allreduce"].engine_benchmark == "nccl.allreduce"
    assert by["torch.allreduce"].ratio == pytest.approx(2.0, rel=1e-6)
    assert by["torch.allreduce"].added_s == pytest.approx(by["torch.allreduce"].engine_s, rel=1e-6)
    text = compare.section_markdown(records)
    assert "## What PyTorch adds" in text and "nccl.allreduce" in text and "(2.00x)" in text


def test_the_ddp_step_stands_beside_the_engines_bucketed_allreduce(engine_path: Path, h100: list[dict],
                                                                   tmp_path: Path) -> None:
    pattern = engine_record(h100, "pattern.bucketed_allreduce.nccl", 32 << 20, compute_us=0)
    every = {"memory": "gpu", "gpu": None, "numa": None, "rank": None, "node": "vm", "processor": False,
             "allocator": "device", "first_touch": "gpu"}

    def step(sync: bool, seconds: float, key: str = "torch.ddp_step") -> dict:
        movement = {"operation": "bucketed_allreduce", "direction": "all_to_all", "mechanism": "torch_nccl",
                    "from": every, "to": every, "participants": 2, "choices": {"bucket_cap_mb": 25}, "same_node": True}
        if not sync:  # as the worker declares the baseline
            movement.update(operation="nothing", direction="none", reference_of="torch.ddp_step")
        identity = worker.base(key, {"bucket_cap_mb": 25, "gradient_sync": sync}, movement, 32 << 20, 2, None, {})
        return worker.result(identity, [seconds] * 10, float(32 << 20), "CUDA events", 1,
                             (True, (32 << 20) if sync else 0, ""), "replicas" if sync else "none", "", True)

    records = Engine(engine_path).ingested([step(True, 0.050), step(False, 0.040),
                                            step(True, 0.015, "torch.ddp_allreduce")])
    (row,) = compare.ddp_rows([*h100, *records])
    assert row.step_s == pytest.approx(0.050) and row.compute_s == pytest.approx(0.040)
    assert row.kernels_s == pytest.approx(0.015) and row.busy_share == pytest.approx(0.3)
    assert row.share == pytest.approx(0.2) and row.engine_s == pytest.approx(pattern["stats"]["median_s"])
    assert "### DDP step" in compare.section_markdown([*h100, *records])
    # In the map, the step is a contender for its movement; the baseline without all-reduce is not.
    from commatlas.analysis.answers import collect
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [h100[0], *records]))
    movements, left_out = collect(load_run(tmp_path))
    assert left_out["reference"] == 1 and len(movements) == 1
    assert "15 ms (30%)" in compare.section_markdown([*h100, *records])


def test_allreduce_loops_stay_exact_in_float32() -> None:
    # 2 ranks: a sum of 16 doubles each time; 2^100 is far inside float32's range.
    assert worker.allreduce_ops_cap(2, 16) == 97
    cap = worker.allreduce_ops_cap(3, 24)  # the most whose values stay below 2^24, where float32 is exact
    assert 3 ** (cap - 1) * 24 < 2 ** 24 <= 3 ** cap * 24
    assert worker.allreduce_ops_cap(1, 8) == worker.MAX_OPS


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed here")
def test_the_model_is_gpt2_small_sized() -> None:
    import torch

    from commatlas.frameworks.torch.model import Gpt, parameter_count
    with torch.device("meta"):
        model = Gpt()
    assert 123_000_000 < parameter_count(model) < 125_000_000


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed here")
@pytest.mark.skipif(not have_mpiexec(), reason="no mpiexec on PATH")
def test_distributed_plumbing_on_gloo_under_mpiexec(tmp_path: Path) -> None:
    from commatlas.run.launcher import find_launcher
    launcher = suite.unbound(find_launcher(2, None))
    env = {**os.environ, **catalog.fixed_environment(), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(suite.free_port()),
           "PYTHONPATH": str(REPO / "python")}
    program = [sys.executable, "-m", suite.WORKER, "--part", "dist", "--backend", "gloo", "--sizes", "8,4096",
               "--keys", "torch.allreduce,torch.allgather,torch.bandwidth,torch.pingpong,torch.ddp_step,torch.ddp_allreduce",
               "--time-budget", "0.01", "--buckets", "1", "--steps", "2", "--layers", "1", "--batch", "2",
               "--sequence", "16"]
    done = subprocess.run(launcher.command(program, {k: env[k] for k in ("MASTER_ADDR", "MASTER_PORT", "PYTHONPATH")}),
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    measurements = [m for m in map(suite.measurement_of, done.stdout.splitlines()) if m]
    results = [m for m in measurements if m["type"] == "result"]
    assert {m["benchmark"] for m in results} == {"torch.allreduce", "torch.allgather", "torch.bandwidth",
                                                 "torch.pingpong", "torch.ddp_step"}
    assert all(m["verified"]["ok"] for m in results), [m["verified"] for m in results if not m["verified"]["ok"]]
    # The NCCL kernels' time is profiled on CUDA only: on gloo, a skip that says so.
    assert [m["reason"] for m in measurements if m["benchmark"] == "torch.ddp_allreduce"] == [
        "profiles NCCL kernels: CUDA only"]
    assert all(m["movement"]["mechanism"] == "torch_gloo" for m in results)  # never passed off as NCCL
    steps = [m for m in results if m["benchmark"] == "torch.ddp_step"]
    assert [m["params"]["gradient_sync"] for m in steps] == [True, False]
    assert steps[0]["verified"]["method"] == "replicas"
    # The baseline without all-reduce moves nothing and is the step's reference, not a contender.
    assert (steps[1]["movement"]["operation"], steps[1]["movement"]["reference_of"]) == ("nothing", "torch.ddp_step")


def test_the_report_has_the_section(ingested: list[dict], h100: list[dict], tmp_path: Path) -> None:
    from commatlas.report.render import write_report
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    engine = [r for r in h100 if r.get("type") == "result" and r["benchmark"] in ("gpu.copy_ce", "nccl.allreduce")]
    lines = [h100[0], *engine, *ingested, h100[-1]]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    paths = write_report(run_dir)
    summary = paths.markdown.read_text()
    assert "## What PyTorch adds" in summary
    assert "allreduce, 2 GPUs" in summary and "nccl.allreduce" in summary
    assert 'id="framework"' in paths.html.read_text()


def test_a_pass_of_the_suite_writes_skip_records_when_pytorch_cannot_run(engine_path: Path, tmp_path: Path,
                                                                         monkeypatch, validator) -> None:
    # The suite's own plumbing inside a run: the worker started, its lines followed and ingested.
    import io

    from rich.console import Console

    from commatlas.run.progress import PhaseProgress
    from commatlas.run.execute import run_phase
    fake = tmp_path / "planted" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('planted: no torch here')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake.parent), str(REPO / "python")]))
    results, log = tmp_path / "results.jsonl", tmp_path / "engine.log"
    plan = suite.TorchPlan(("torch.copy", "torch.allreduce"), None, "no mpiexec or mpirun on PATH")
    with PhaseProgress(Console(file=io.StringIO())) as progress:
        suite.run_torch_suite(plan, Engine(engine_path), results, log, run_phase, progress, {}, (), 2, (), True, None)
    records = read_lines(results)
    assert [(r["type"], r["benchmark"], r["repeat"]) for r in records] == [("skip", "torch.copy", 2),
                                                                          ("skip", "torch.allreduce", 2)]
    assert "planted: no torch here" in records[0]["reason"] and "no mpiexec" in records[1]["reason"]
    assert all(not [e.message for e in validator.iter_errors(r)] for r in records)
    assert "commatlas.frameworks.torch.worker --part copy" in log.read_text()


def test_the_all_reduce_time_is_every_nccl_kernel_the_profile_saw() -> None:
    from types import SimpleNamespace as NS
    fake_torch = NS(autograd=NS(DeviceType=NS(CUDA="cuda", CPU="cpu")))

    def event(name: str, device: str, us: float) -> NS:
        return NS(name=name, device_type=device, time_range=NS(elapsed_us=lambda: us))
    prof = NS(events=lambda: [
        event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cuda", 700.0),
        event("ncclDevKernel_Generic", "cuda", 300.0),          # NCCL's generic kernel counts too
        event("nccl:all_reduce", "cpu", 5000.0),                # the host-side op: not GPU time
        event("ampere_sgemm_128x64_tn", "cuda", 9000.0),        # compute
    ])
    assert worker.nccl_kernel_seconds(fake_torch, prof) == pytest.approx(1e-3)


def test_unbound_drops_the_engines_core_blocks_and_keeps_a_users_line() -> None:
    ours = Launcher("openmpi", ("mpiexec", "--allow-run-as-root", "--map-by", "slot:PE=16", "--bind-to", "core", "-n", "2"), 2)
    assert suite.unbound(ours).prefix == ("mpiexec", "--bind-to", "none", "--allow-run-as-root", "-n", "2")
    theirs = Launcher("custom", ("mpirun", "--bind-to", "socket", "-n", "2"), None)
    assert suite.unbound(theirs) is theirs
