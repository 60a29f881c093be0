"""One machine as two nodes: each rank in a UTS namespace of its own with its own host name
(scripts/ci/as_node.sh), MPI over TCP. Records must say two nodes, the report groups by node pair,
a rank that stops answering is named by the watchdog, and soak noise measures see injected noise."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from commatlas.analysis.multinode import hang_from_log, noise_measures, soaks

REPO = Path(__file__).resolve().parents[1]
AS_NODE = REPO / "scripts" / "ci" / "as_node.sh"


def can_fake_nodes() -> str | None:
    if os.geteuid() != 0:
        return "needs root (unshare --uts)"
    if shutil.which("unshare") is None or shutil.which("mpiexec") is None:
        return "needs unshare and mpiexec"
    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare --uts does not work here: {probe.stderr.decode(errors='replace').strip()}"
    return None


pytestmark = pytest.mark.skipif(can_fake_nodes() is not None, reason=str(can_fake_nodes()))


def launcher(ranks: int = 2) -> str:
    return (f"mpiexec --allow-run-as-root --oversubscribe -n {ranks} --mca btl tcp,self "
            f"-x COMMATLAS_NODES -x COMMATLAS_PID_DIR {AS_NODE}")


def commatlas(engine: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180,
              background: bool = False):
    environment = {**os.environ, "COMMATLAS_ENGINE": str(engine), "PYTHONPATH": str(REPO / "python"),
                   "COMMATLAS_NODES": "2", **(env or {})}
    command = [sys.executable, "-m", "commatlas", *args]
    if background:
        # Output to files: a pipe nobody reads while we wait would fill and stall the run.
        log_dir = Path(environment.get("COMMATLAS_PID_DIR", "."))
        return subprocess.Popen(command, env=environment, stdout=(log_dir / "stdout").open("w"),
                                stderr=(log_dir / "stderr").open("w"), text=True, start_new_session=True)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout, check=False)


def records(run_dir: Path) -> list[dict]:
    """The run's whole records so far (none before the file exists; a line still being written is
    left for the next look)."""
    path = run_dir / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines(keepends=True) if line.endswith("\n") and line.strip()]


def test_two_nodes_are_two_nodes(engine_path: Path, tmp_path: Path, validator) -> None:
    run_dir = tmp_path / "run"
    done = commatlas(engine_path, "run", "--suite", "mpi", "--only", "mpi.pingpong,mpi.allreduce", "--sizes", "8",
                     "--quick", "--out", str(run_dir), "--launcher", launcher())
    assert done.returncode == 0, done.stderr
    results = [r for r in records(run_dir) if r["type"] == "result"]
    assert {r["benchmark"] for r in results} == {"mpi.pingpong", "mpi.allreduce"}
    for r in results:
        validator.validate(r)
        assert r["placement"]["nodes"] == ["node0", "node1"], r["placement"]
        assert r["placement"]["node_count"] == 2 and r["placement"]["same_node"] is False
        # Between nodes the path's peak is the NICs', never an intra-node one; here eth0 gives no rate.
        assert "inter-node" in r["peak"].get("source", "") or "inter-node" in r["peak"].get("unknown", ""), r["peak"]
    allreduce = next(r for r in results if r["benchmark"] == "mpi.allreduce")
    assert allreduce["collective"]["expected"]["goodput_gbps"] is None
    assert "2 nodes" in allreduce["collective"]["expected"]["unknown"]
    report = (run_dir / "report.html").read_text()
    assert "By node pair" in report and "node0 ↔ node1" in report


def pid_of(pid_dir: Path, rank: int, timeout: float = 60) -> int:
    path = pid_dir / f"rank{rank}.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.1)
    raise AssertionError(f"rank {rank} never started")


def test_watchdog_names_the_rank_that_stopped(engine_path: Path, tmp_path: Path) -> None:
    run_dir, pid_dir = tmp_path / "run", tmp_path / "pids"
    pid_dir.mkdir()
    # Rank 1 stops once the first point is written; the watchdog's limit is far above a --quick point's
    # time even on two shared cores, and the stop lasts until the job is gone.
    proc = commatlas(engine_path, "run", "--suite", "mpi", "--only", "mpi.allreduce", "--sizes", "8,16,32,64,128,256",
                     "--precision", "off", "--time-budget", "0.5", "--watchdog", "20", "--out", str(run_dir),
                     "--launcher", launcher(),
                     env={"COMMATLAS_PID_DIR": str(pid_dir)}, background=True)
    try:
        pid_of(pid_dir, 1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(r["type"] == "result" for r in records(run_dir)):
            time.sleep(0.2)
        # Read the pid only now: every launch of the job writes it, and a launch before the measuring
        # one (the launcher's check) leaves a pid that is gone by the time the first point is written.
        os.kill(pid_of(pid_dir, 1), signal.SIGSTOP)
        proc.wait(timeout=90)
        err = (pid_dir / "stderr").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, err
    assert "ranks that stopped answering: 1 (node1)" in err, err
    assert "mpi.allreduce" in err
    kept = records(run_dir)
    assert any(r["type"] == "result" for r in kept), "records measured before the hang must survive"
    hung = [r for r in kept if r["type"] == "error" and "watchdog" in r["message"]]
    assert len(hung) == 1 and "node0" in hung[0]["message"], kept
    assert kept[-1]["type"] == "end" and kept[-1]["status"] == "failed"


def soak_once(engine: Path, run_dir: Path, pid_dir: Path, noise: bool) -> dict:
    proc = commatlas(engine, "run", "--suite", "mpi", "--only", "mpi.allreduce", "--sizes", "256K", "--soak", "4",
                     "--out", str(run_dir), "--launcher", launcher(), env={"COMMATLAS_PID_DIR": str(pid_dir)},
                     background=True)
    stop = threading.Event()

    def pause_rank_1() -> None:
        # 1 ms paused in every 5 ms: a few percent of the ~0.1 ms iterations take about 1 ms longer,
        # enough to reach the p99 the tail measure reads (20 ms every 100 ms touched ~0.15% of
        # them, below p99, and the test depended on luck).
        rank1 = pid_of(pid_dir, 1)
        time.sleep(1.5)  # past warm-up and calibration, into the soak
        while not stop.is_set():
            try:
                os.kill(rank1, signal.SIGSTOP)
                time.sleep(0.001)
                os.kill(rank1, signal.SIGCONT)
            except ProcessLookupError:
                return
            time.sleep(0.004)

    pauser = threading.Thread(target=pause_rank_1, daemon=True)
    if noise:
        pauser.start()
    try:
        proc.wait(timeout=120)
        err = (pid_dir / "stderr").read_text()
    finally:
        stop.set()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    found = soaks(records(run_dir))
    assert len(found) == 1
    return {"soak": found[0], "report": (run_dir / "report.html").read_text()}


@pytest.mark.skipif(os.getloadavg()[0] > (os.cpu_count() or 1),
                    reason="machine busier than its cores: no quiet baseline to compare a noisy soak with")
def test_soak_noise_measures_see_a_paused_rank(engine_path: Path, tmp_path: Path) -> None:
    for name in ("quiet-pids", "noisy-pids"):
        (tmp_path / name).mkdir()
    quiet = soak_once(engine_path, tmp_path / "quiet", tmp_path / "quiet-pids", noise=False)
    noisy = soak_once(engine_path, tmp_path / "noisy", tmp_path / "noisy-pids", noise=True)
    q, n = quiet["soak"], noisy["soak"]
    assert q.node_count == 2 and q.measures.iterations > 100
    # Every iteration is kept with its start time, spanning the soak.
    assert len(q.start_s) == len(q.samples_s) == q.measures.iterations and 3.5 < q.start_s[-1] < 30
    # The pauses reach p99 every time (3.5-6x the quiet tail here). The share of slow iterations
    # moves less than this VM's own noise does (7-11% quiet), so it is only checked to be reported.
    assert n.measures.tail_slowdown > 2 * q.measures.tail_slowdown, (q.measures, n.measures)
    assert 0 <= q.measures.share_slow <= 1 and 0 <= n.measures.share_slow <= 1
    assert "Noise over time" in quiet["report"] and "<svg" in quiet["report"]


def test_noise_measures_and_hang_parsing() -> None:
    m = noise_measures([1.0] * 98 + [3.0, 10.0])
    assert m.median_slowdown == 1 and m.share_slow == pytest.approx(0.02) and m.tail_slowdown > 2
    log = ("commatlas-engine: watchdog: mpi.allreduce at 8 B on 3 ranks did not finish within 4 s (seen by rank 0 on a); x\n"
           "commatlas-engine: watchdog: mpi.allreduce at 8 B on 3 ranks did not finish within 4 s (seen by rank 2 on b); x\n"
           "commatlas-engine: watchdog: mpi.allreduce at 8 B on 3 ranks did not finish within 4 s (seen by rank 1 on b, "
           "itself stopped for 30 s); x\n")
    hang = hang_from_log(log)
    assert hang is not None and hang.stopped == [1] and hang.answered == {0: "a", 2: "b"}
    assert "stopped answering: 1 (b)" in hang.describe(["a", "b", "b"])
