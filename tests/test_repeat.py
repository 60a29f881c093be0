"""--repeat K and --sweep-env: every pass writes into the same run, each record says which pass
it belongs to (repeat, env.NAME as the engine itself read it), and the report shows the
run-to-run variation of the K medians next to the within-run spread."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from commatlas.analysis.repeats import benchmark_spreads, point_spreads
from commatlas.io.results import load_run
from conftest import assert_valid_run, have_mpiexec, run_cli

PROBE = "COMMATLAS_SWEEP_PROBE"


def test_repeat_and_sweep_stamp_every_record(engine_path: Path, tmp_path: Path, validator) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "--only", "reference.harness_overhead", "--sizes", "1,2", "--time-budget", "0.02",
                   "--repeat", "2", "--sweep-env", f"{PROBE}=a,b b", "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = assert_valid_run(out / "results.jsonl", validator)
    results = [r for r in records if r["type"] == "result"]
    passes = collections.Counter((r["repeat"], r["params"][f"env.{PROBE}"]) for r in results)
    # 2 repetitions x 2 values, both sizes in each: the engine saw the value of its own pass.
    assert passes == {(1, "a"): 2, (1, "b b"): 2, (2, "a"): 2, (2, "b b"): 2}
    assert len({r["point"] for r in results}) == 8
    assert records[0]["options"]["repeat"] == 2
    assert records[0]["options"]["sweep_env"] == [{"name": PROBE, "values": ["a", "b b"]}]
    html = (out / "report.html").read_text()
    assert "Run-to-run variation" in html
    # The reader does not call another repetition a duplicate.
    assert not any("measured again" in note for note in load_run(out).notes)


def test_without_repeat_records_carry_no_repeat(engine_path: Path, tmp_path: Path, validator) -> None:
    out = tmp_path / "run"
    assert run_cli("run", "--only", "reference.harness_overhead", "--quick", "--out", str(out)).returncode == 0
    records = assert_valid_run(out / "results.jsonl", validator)
    assert all("repeat" not in r and not any(k.startswith("env.") for k in r["params"])
               for r in records if r["type"] == "result")
    assert "Run-to-run variation" not in (out / "report.html").read_text()


@pytest.mark.parametrize("args", [["--repeat", "0"], ["--repeat", "-3"], ["--sweep-env", "NOVALUES"],
                                  ["--sweep-env", "1X=a"], ["--sweep-env", "X=a,,b"], ["--sweep-env", "X="],
                                  ["--sweep-env", "X=a", "--sweep-env", "X=b"]])
def test_bad_repeat_or_sweep_is_one_line(engine_path: Path, tmp_path: Path, args: list[str]) -> None:
    from conftest import assert_one_line_error

    done = run_cli("run", "--only", "reference.harness_overhead", "--quick", *args, "--out", str(tmp_path / "r"))
    assert_one_line_error(done)
    assert not (tmp_path / "r").exists(), "nothing is created before the options are known to be good"


def test_sweep_reaches_every_mpi_rank_run(engine_info, engine_benchmarks, tmp_path: Path, validator) -> None:
    if not engine_info["backends"].get("mpi", {}).get("built") or not have_mpiexec():
        pytest.skip("needs the MPI backend and mpiexec")
    out = tmp_path / "run"
    done = run_cli("run", "--only", "mpi.pingpong", "--ranks", "2", "--sizes", "8", "--time-budget", "0.02",
                   "--sweep-env", f"{PROBE}=x,y", "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    records = assert_valid_run(out / "results.jsonl", validator)
    # The OSU-method reference the run starts after the MPI phase carries the pass's variable too.
    engine = [r for r in records if r["type"] == "result" and r["benchmark"] == "mpi.pingpong"]
    assert sorted(r["params"][f"env.{PROBE}"] for r in engine) == ["x", "y"]
    log = (out / "engine.log").read_text()
    if records[0]["launcher"]["kind"] == "openmpi":
        assert f"-x {PROBE}" in log, "Open MPI passes a variable on only when -x names it"


def fake_result(repeat: int, median: float, p5: float, p95: float, size: int = 8):
    from commatlas.io.results import Result, Stats, Timing

    return Result("b.x", "reference", "harness", "host", "latency", {}, size, 1, 0.0, 1,
                  bytes_per_op=0, timing=Timing("t", 5, 1, 0, False),
                  stats=Stats(p5, p5, median, median, p95, p95, p95, 0, 0), bandwidth_gbps=0, latency_us=median * 1e6,
                  verified_ok=True, bytes_checked=0, repeat=repeat)


def test_spreads_against_hand_computed_values() -> None:
    rows = point_spreads([fake_result(1, 1.0, 0.9, 1.1), fake_result(2, 1.5, 1.2, 1.8), fake_result(3, 2.0, 1.8, 2.2)])
    assert len(rows) == 1
    # medians 1, 1.5, 2: (2 - 1) / 1.5; within: (0.2/1, 0.6/1.5, 0.4/2) -> median 0.2
    assert rows[0].run_to_run == pytest.approx(1 / 1.5)
    assert rows[0].within_run == pytest.approx(0.2)
    assert rows[0].repeats == 3
    # One repetition has no run-to-run spread; the worst size is the one reported per benchmark.
    assert point_spreads([fake_result(1, 1.0, 0.9, 1.1)]) == []
    worst = benchmark_spreads([fake_result(1, 1.0, 0.9, 1.1, 8), fake_result(2, 1.1, 0.9, 1.1, 8),
                               fake_result(1, 1.0, 0.9, 1.1, 16), fake_result(2, 3.0, 0.9, 1.1, 16)])
    assert [(r.bytes, round(r.run_to_run, 3)) for r in worst] == [(16, 1.0)]
