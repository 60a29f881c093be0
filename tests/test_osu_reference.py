"""commatlas-osu-ref, the OSU-method reference in its own process: it runs OSU 7.x's loops with
OSU's counts, its output becomes valid records, and bad input is one line with status 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import have_mpiexec
from commatlas.analysis import osu
from commatlas.run.launcher import find_launcher
from commatlas.io.engine import Engine


@pytest.fixture(scope="module")
def reference(engine_path: Path, engine_info) -> Path:
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    if not have_mpiexec():
        pytest.skip("no mpiexec on PATH")
    path = osu.reference_path(engine_path)
    assert path is not None, f"{osu.REFERENCE_PROGRAM} is not next to {engine_path}"
    return path


def launch(reference: Path, *args: str, ranks: int = 2) -> subprocess.CompletedProcess[str]:
    command = find_launcher(ranks, None).command([str(reference), *args])
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def output(reference: Path) -> list[dict]:
    # 8 KiB is OSU's last "small" size (LARGE_MESSAGE_SIZE), 16 KiB its first large one.
    done = launch(reference, "--tests", "latency,bw,bibw", "--sizes", "1,8K,16K")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_counts_are_osu_7_defaults(output: list[dict]) -> None:
    by = {(o["test"], o["bytes"]): o for o in output}
    assert sorted(by) == sorted((t, s) for t in osu.TESTS for s in (1, 8192, 16384))
    for size in (1, 8192):
        assert (by["osu_latency", size]["iterations"], by["osu_latency", size]["skip"]) == (10000, 100)
        assert (by["osu_bw", size]["iterations"], by["osu_bw", size]["skip"]) == (100, 10)
    assert (by["osu_latency", 16384]["iterations"], by["osu_latency", 16384]["skip"]) == (1000, 10)
    for test in ("osu_bw", "osu_bibw"):
        assert (by[test, 16384]["iterations"], by[test, 16384]["skip"]) == (20, 2)
        assert all(by[test, s]["window"] == 64 for s in (1, 8192, 16384))
    assert all(o["verified"] for o in output)


def test_figures_follow_from_the_loop_time(output: list[dict]) -> None:
    for o in output:
        if o["test"] == "osu_latency":
            assert o["latency_us"] == pytest.approx(o["seconds"] * 1e6 / (2 * o["iterations"]), rel=1e-4)
        else:
            both = 2 if o["test"] == "osu_bibw" else 1
            expected = o["bytes"] / 1e6 * o["iterations"] * 64 * both / o["seconds"]
            assert o["mb_per_s"] == pytest.approx(expected, rel=1e-4)


def test_records_validate_and_keep_the_figure(output: list[dict], validator, engine_path: Path) -> None:
    lines = [json.dumps(o) for o in output] + ["[vm:1234] launcher noise", ""]
    records = osu.reference_records(Engine(engine_path), lines, ranks=2, repeat=3)
    assert len(records) == len(output)
    for record, o in zip(records, output):
        assert not [e.message for e in validator.iter_errors(record)]
        assert record["params"]["reference_of"] == osu.TESTS[o["test"]][1]
        assert record["repeat"] == 3 and record["point"].endswith("|2|r3")
        if o["test"] == "osu_latency":
            assert record["latency_us"] == pytest.approx(o["latency_us"], rel=1e-4)
        else:
            assert record["bandwidth_gbps"] * 1000 == pytest.approx(o["mb_per_s"], rel=1e-4)


def test_a_message_that_never_arrived_is_an_error_record(validator, engine_path: Path) -> None:
    line = json.dumps({"test": "osu_bw", "bytes": 64, "verified": False, "detail": "rank 1: byte 0 differs"})
    (record,) = osu.reference_records(Engine(engine_path), [line], ranks=2)
    assert record["type"] == "error" and "rank 1" in record["message"]
    assert not [e.message for e in validator.iter_errors(record)]


@pytest.mark.parametrize("args", [("--sizes", "0"), ("--sizes", "12Q"), ("--tests", "osu_alltoall"), ("--bogus",),
                                  ("--buffers", "managed")])
def test_bad_input_is_one_line_and_status_2(reference: Path, args: tuple[str, ...]) -> None:
    done = launch(reference, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("commatlas-osu-ref: error:")]
    assert len(said) == 1 and "Traceback" not in done.stderr


def test_needs_exactly_two_ranks(reference: Path) -> None:
    done = launch(reference, "--sizes", "1", ranks=1)
    assert done.returncode == 2 and "exactly two ranks" in done.stderr


def test_engine_asks_for_mpi_thread_single(engine_path: Path, engine_info) -> None:
    # Open MPI locks internally at any level above SINGLE (+25% latency at 1 B: osu_compare.sh).
    if not engine_info["backends"].get("mpi", {}).get("built"):
        pytest.skip("this engine was built without MPI")
    assert engine_info["backends"]["mpi"]["thread_level"] == "single"


def test_a_bad_thread_level_is_one_line_and_status_2(engine_path: Path, reference: Path, tmp_path: Path) -> None:
    command = find_launcher(2, None).command([str(engine_path), "run", "--mpi", "--out", str(tmp_path / "r.jsonl"),
                                              "--only", "mpi.pingpong", "--sizes", "1", "--progress", "none"])
    done = subprocess.run(["env", "COMMATLAS_MPI_THREAD_LEVEL=lots", *command], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "COMMATLAS_MPI_THREAD_LEVEL=lots is not an MPI thread level" in done.stderr


def test_host_lines_say_their_buffers_and_a_1_byte_ack_is_checked_whole(output: list[dict]) -> None:
    assert {o["buffers"] for o in output} == {"host"}
    # osu_bw's 4-byte ack comes from s_buf: at 1 B its last 3 bytes must be set too, or the check
    # reads whatever the buffer held ("rank 0: byte 1 of the message differs").
    (bw,) = [o for o in output if o["test"] == "osu_bw" and o["bytes"] == 1]
    assert bw["verified"] and bw["bytes_checked"] == 5


def test_device_buffers_are_refused_unless_mpi_reports_cuda_support(reference: Path, engine_info) -> None:
    """A device pointer never reaches an MPI that does not say it takes one: a build without CUDA
    refuses the option (status 2), a CUDA build under an MPI without CUDA support refuses to run
    (status 3, the library's answer in one line). Where MPI is CUDA-aware and a GPU is here, the
    test has nothing to refuse and says so."""
    done = launch(reference, "--tests", "latency", "--sizes", "8", "--buffers", "device")
    said = [line for line in done.stderr.splitlines() if line.startswith("commatlas-osu-ref: error:")]
    if done.returncode == 0:
        pytest.skip("this MPI reports CUDA support and a GPU is visible: device buffers run here")
    assert not [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(said) == 1, done.stderr
    if done.returncode == 2:
        assert "needs a CUDA build" in said[0]
    else:
        assert done.returncode == osu.REFUSED_DEVICE_BUFFERS
        assert "--buffers device:" in said[0] and "CUDA support" in said[0]


def test_sweeps_after_then_run_in_the_same_launch(reference: Path) -> None:
    """`--then` starts a sweep of its own in the same launch (`commatlas run` puts host and device
    buffers in one): each sweep keeps its own tests, sizes and passes."""
    done = launch(reference, "--tests", "latency", "--sizes", "8", "--passes", "2", "--then", "--tests", "bw",
                  "--sizes", "64,4096")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(o["test"], o["bytes"], o.get("pass")) for o in lines] == [
        ("osu_latency", 8, 1), ("osu_latency", 8, 2), ("osu_bw", 64, None), ("osu_bw", 4096, None)]
    for args in (["--tests", "latency", "--then"], ["--then", "--tests", "latency"]):
        bad = launch(reference, *args)
        assert bad.returncode == 2 and "commatlas-osu-ref: error: --then needs a sweep on each side" in bad.stderr


def test_a_refused_device_sweep_leaves_the_host_sweep_of_its_launch(reference: Path) -> None:
    """Where the device sweep cannot run (MPI without CUDA support: status 3), the host sweep before
    it still measures; a build without CUDA refuses the option outright (status 2)."""
    done = launch(reference, "--tests", "latency", "--sizes", "8", "--then", "--tests", "latency", "--sizes", "8",
                  "--buffers", "device")
    if done.returncode == 0:
        pytest.skip("this MPI reports CUDA support and a GPU is visible: device buffers run here")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode == 2:
        assert "needs a CUDA build" in done.stderr and not lines
        return
    assert done.returncode == osu.REFUSED_DEVICE_BUFFERS
    assert [(o["test"], o["buffers"]) for o in lines] == [("osu_latency", "host")]
    assert "--buffers device:" in done.stderr


def test_a_second_pass_becomes_the_points_stability_record(reference: Path, engine_path: Path) -> None:
    """--passes 2 sweeps twice; the second pass is the point's confirmation, judged by the engine's
    own rule (a stability record after the result). A second pass planted 2x slower is unstable."""
    done = launch(reference, "--tests", "latency,bw", "--sizes", "1,64", "--passes", "2")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert sorted(json.loads(line)["pass"] for line in lines) == [1] * 4 + [2] * 4
    engine = Engine(engine_path)
    records = osu.reference_records(engine, lines, 2)
    results = [r for r in records if r["type"] == "result"]
    stability = {r["point"]: r["stability"] for r in records if r["type"] == "stability"}
    assert len(results) == 4 and set(stability) == {r["point"] for r in results}
    for r in results:
        st = stability[r["point"]]
        assert st["verdict"] in ("repeatable", "unstable") and len(st["passes_median_s"]) == 2
        assert st["passes_median_s"][0] == pytest.approx(r["stats"]["median_s"])  # the figure is pass 1's
    # Twice pass 1's time, not twice its own: on a VM whose host moved the ranks' CPUs between the
    # passes (tests/test_cpu_pair.py), pass 2 alone can read 2-4x apart from pass 1 either way.
    first = {(o["test"], o["bytes"]): o["seconds"] for o in map(json.loads, lines) if o["pass"] == 1}
    slower = []
    for line in lines:
        out = json.loads(line)
        if out["pass"] == 2:
            out["seconds"] = 2 * first[(out["test"], out["bytes"])]
        slower.append(json.dumps(out))
    planted = osu.reference_records(engine, slower, 2)
    assert {r["stability"]["verdict"] for r in planted if r["type"] == "stability"} == {"unstable"}
    # A second pass that saw wrong bytes fails the point.
    broken = [line.replace('"verified":true', '"verified":false') if '"pass":2' in line else line for line in lines]
    assert {r["type"] for r in osu.reference_records(engine, broken, 2)} == {"error"}
