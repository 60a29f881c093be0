"""Engine vs the OSU method: verdicts that say what a row means, and the device-buffer reference
(OSU's -d cuda D D) set beside the device -> device variant of mpi.gpu_aware.*.

Records are real, cut from the committed runs under results/ into tests/fixtures/ (each with a
README): five interleaved rounds of engine and reference on one H100 machine (h100-osu-rounds: the
ping-pong and bibw rounds of results/nvidia-h100-x1/osu-compare/rounds.jsonl), a one-pass default run
of the same machine (h100-atlas-default), and the MPI records of a two-GPU default run whose GPU-aware
MPI measured every allocator (h200x2-call4). Two more runs carry the two jobs' states beside their
figures: a 2x H200 default run and a fresh job whose reference read each rank's copy level around
its device loops (h200x2-osu-copy-level), and a 2-core default run whose host kept the engine's CPUs
apart and the reference's together (cpu-2core-osu-placement)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from commatlas.analysis import osu
from commatlas.analysis.agreement import Kind
from commatlas.io.records import read_records
from commatlas.report.summary import print_summary
from commatlas.io.engine import Engine
from conftest import fixture_json, fixture_run, read_lines

ROUNDS = fixture_run("h100-osu-rounds") / "rounds.jsonl"
ONE_PASS = fixture_run("h100-atlas-default") / "default" / "results.jsonl"
TWO_GPUS = fixture_run("h200x2-call4") / "default" / "results.jsonl"
LEVELS = fixture_run("h200x2-osu-copy-level")
PLACED_APART = fixture_run("cpu-2core-osu-placement") / "results.jsonl"


def row(rows: list[osu.ComparisonRow], benchmark: str, size: int) -> osu.ComparisonRow:
    (found,) = [r for r in rows if r.benchmark == benchmark and r.bytes == size]
    return found


def slower(records: list[dict], benchmark: str, size: int, factor: float) -> list[dict]:
    """The same records with the engine's point taking `factor` times as long, in every round."""
    out = copy.deepcopy(records)
    for r in out:
        if r.get("type") == "result" and r["benchmark"] == benchmark and r["bytes"] == size:
            r["latency_us"] *= factor
            r["bandwidth_gbps"] /= factor
    return out


# --- verdicts -----------------------------------------------------------------------------------------

def test_five_rounds_within_three_percent_agree():
    rows = osu.comparison_rows(read_lines(ROUNDS))
    # 1 B bibw: 1.004x the reference over 5 rounds.
    assert row(rows, "mpi.bibw", 1).verdict.text == "agrees"


def test_a_difference_inside_the_machines_own_spread_is_not_called_a_miss():
    rows = osu.comparison_rows(read_lines(ROUNDS))
    # 64 KiB ping-pong: 1.059x, outside 3% and outside the reference's own 5.6% spread (the OSU-method
    # rule says "no"), but the engine's own rounds spread 8.5%: the machine did not repeat.
    r = row(rows, "mpi.pingpong", 65536)
    assert (r.rounds, r.agree) == (5, False)
    assert r.reference_spread == pytest.approx(0.056, abs=0.001) and r.engine_spread == pytest.approx(0.085, abs=0.001)
    assert r.verdict.kind is Kind.DID_NOT_REPEAT
    assert r.verdict.text == "the machine did not repeat (its own spread is 8.5%, wider than the difference)"


def test_one_pass_says_the_spread_is_unknown_and_how_to_measure_it():
    rows = osu.comparison_rows(read_lines(ONE_PASS))
    r = row(rows, "mpi.bandwidth", 4096)  # 0.83x in one pass
    assert r.rounds == 1 and r.verdict.kind is Kind.ONE_PASS
    assert r.verdict.text == "one pass: spread unknown, --repeat 3 measures it"
    assert row(rows, "mpi.bandwidth", 1).verdict.text == "agrees"  # 1.028x


def test_a_real_slowdown_beyond_the_spread_is_named_with_its_direction():
    records = read_lines(ROUNDS)
    # 1 B bibw agrees (1.004x, spreads 15% and 12%); 40% slower in every round is past them.
    r = row(osu.comparison_rows(slower(records, "mpi.bibw", 1, 1.4)), "mpi.bibw", 1)
    assert r.verdict.differs and not r.agree
    assert r.verdict.text.startswith("the engine is slower than the reference beyond its spread (28% apart, spread ")
    # Latency: a larger figure is the slower one; a smaller one the faster.
    fast = row(osu.comparison_rows(slower(records, "mpi.pingpong", 1, 1 / 1.4)), "mpi.pingpong", 1)
    assert fast.verdict.text.startswith("the engine is faster than the reference beyond its spread")
    slow = row(osu.comparison_rows(slower(records, "mpi.pingpong", 1, 1.4)), "mpi.pingpong", 1)
    assert slow.verdict.text.startswith("the engine is slower than the reference beyond its spread")


def test_the_summary_table_prints_the_verdict_at_80_columns():
    out = io.StringIO()
    print_summary(Console(file=out, width=80, color_system=None), read_records(ONE_PASS))
    text = out.getvalue()
    start = text.index("Engine vs OSU method")
    table = text[start:text.index("\n", text.index("└", start) + 1) + 1]
    table += text[len(table) + start:].splitlines()[0]  # the caption line below it
    assert "verdict" in table and "│ no " not in table
    rows = [line for line in table.splitlines() if line.startswith("│ mpi.")]
    assert len(rows) == 15 and sum("│ one pass" in line for line in rows) == 12
    # One line per row at 80 columns; the meaning is said once, below.
    assert "one pass: the spread is unknown, --repeat 3 measures it" in table
    assert all(len(line) <= 80 for line in table.splitlines())


# --- the two jobs' states ---------------------------------------------------------------------------

def without_reference_levels(records: list[dict]) -> list[dict]:
    out = copy.deepcopy(records)
    for r in out:
        if r.get("benchmark", "").startswith("reference."):
            r.get("timing", {}).pop("copy_level_us", None)
    return out


def test_the_device_reference_keeps_each_ranks_copy_level_around_its_loop():
    records = read_lines(LEVELS / "default" / "results.jsonl")
    device = [r for r in records if r.get("type") == "result" and r["benchmark"].startswith("reference.osu_")
              and r["params"].get("buffers") == "device"]
    host = [r for r in records if r.get("type") == "result" and r["benchmark"].startswith("reference.osu_")
            and r["params"].get("buffers") != "device"]
    assert len(device) == 15 and len(host) == 15
    for r in device:  # two ranks, before and after its loop, as the engine's own records keep them
        levels = r["timing"]["copy_level_us"]
        assert len(levels) == 2 and all(len(pair) == 2 and all(5 < us < 15 for us in pair) for pair in levels)
    assert not any("copy_level_us" in r["timing"] for r in host)


def test_a_miss_where_the_two_jobs_copied_at_different_levels_names_both_readings():
    records = read_lines(LEVELS / "default" / "results.jsonl")
    r = row(osu.comparison_rows(records), "mpi.gpu_aware.bandwidth", 4096)
    # The engine's job read 1.61x the reference's: its receiving rank copied at 7.38 us, the reference's at 8.82.
    assert r.ratio == pytest.approx(1.61, abs=0.01) and r.rounds == 1
    assert r.verdict.kind is Kind.JOB_STATE and not r.verdict.differs
    assert r.verdict.text == ("the two jobs drew different states: rank 1's 8 B copies to and from its GPU took "
                              "8.82 us in the reference's job and 7.38 us in the engine's job")
    # Without the reference's readings nothing says why: one pass, as before.
    assert row(osu.comparison_rows(without_reference_levels(records)), "mpi.gpu_aware.bandwidth",
               4096).verdict.kind is Kind.ONE_PASS
    # Within the rule the levels are not asked: 16 MiB agrees though the levels lay as far apart.
    assert row(osu.comparison_rows(records), "mpi.gpu_aware.bandwidth", 16 << 20).verdict.text == "agrees"


def test_the_level_explains_a_miss_only_the_way_it_moves_figures():
    records = read_lines(LEVELS / "default" / "results.jsonl")
    # The engine made 2.1x slower at 4 KiB: now slower than the reference, though its ranks copied
    # faster. The levels cannot explain that; the verdict falls back to what it knows.
    slowed = slower(records, "mpi.gpu_aware.bandwidth", 4096, 2.1)
    r = row(osu.comparison_rows(slowed), "mpi.gpu_aware.bandwidth", 4096)
    assert r.ratio < 1 and r.verdict.kind is Kind.ONE_PASS and r.job_state == ""
    # The other way round, in a job whose engine ranks drew the slower level and the reference's the
    # faster: the engine read slower, and the verdict says why.
    job = osu.comparison_rows(read_lines(LEVELS / "job-3" / "results.jsonl"))
    r = row(job, "mpi.gpu_aware.bibw", 65536)
    assert r.ratio == pytest.approx(0.71, abs=0.01) and r.verdict.kind is Kind.JOB_STATE
    assert "7.33 us in the reference's job and 8.92 us in the engine's job" in r.verdict.text


def test_a_miss_where_the_host_placed_the_engines_cpus_apart_says_so():
    rows = osu.comparison_rows(read_lines(PLACED_APART))
    r = row(rows, "mpi.pingpong", 1)  # 3.0x slower in the engine's job, whose two vCPUs sat apart
    assert r.ratio == pytest.approx(3.0, abs=0.05) and r.verdict.kind is Kind.HOST
    assert r.verdict.text.startswith("the host got in the way: the host placed the job's CPUs apart: a cache line's "
                                     "round trip between CPUs 0 and 1 read 3")
    assert "ns in the engine's job, 8" in r.verdict.text and r.verdict.text.endswith("ns in the reference's job")
    kinds = [x.verdict.kind for x in rows]
    assert kinds.count(Kind.HOST) == 12 and kinds.count(Kind.AGREES) == 3 and Kind.ONE_PASS not in kinds


def test_the_summary_says_once_what_a_job_state_means():
    out = io.StringIO()
    print_summary(Console(file=out, width=80, color_system=None), read_records(LEVELS / "default" / "results.jsonl"))
    text = out.getvalue()
    table = text[text.index("Engine vs OSU method"):]
    rows = [line for line in table.splitlines() if line.startswith("│ mpi.gpu_aware.")]
    assert sum("│ job state │" in line for line in rows) == 10
    caption = " ".join(table[table.index("└"):].split())
    assert "job state: the two figures ran in two jobs, and their ranks copied to and from their GPUs at " \
           "different levels (timing.copy_level_us)" in caption
    assert all(len(line) <= 80 for line in table.splitlines())


def test_a_reference_line_keeps_its_copy_levels_through_the_engines_ingest(engine_path):
    line = json.dumps({"test": "osu_bw", "bytes": 8, "buffers": "device", "gpus": [0, 1], "mb_per_s": 1.2,
                       "window": 64, "seconds": 0.0084, "iterations": 20, "skip": 2,
                       "copy_level_us": [[7.6, 7.61], [8.82, None]], "verified": True, "bytes_checked": 16})
    (record,) = osu.reference_records(Engine(engine_path), [line], ranks=2)
    assert record["timing"]["copy_level_us"] == [[7.6, 7.61], [8.82, None]]


# --- device buffers -------------------------------------------------------------------------------------

def device_lines(records: list[dict]) -> list[str]:
    """commatlas-osu-ref --buffers device output for the sizes the engine's device points measured:
    the program's line format (engine/tools/osu_reference.c), figures set 2% below the engine's so
    that they agree. No GPU-aware MPI is installed where this runs."""
    lines = []
    for r in records:
        if r.get("type") == "result" and osu.compared(r) and osu.CHECKED_BUFFERS[r["benchmark"]] == "device":
            test = osu.CHECKED[r["benchmark"]]
            out = {"test": test, "bytes": r["bytes"], "buffers": "device", "gpus": [0, 1]}
            if test == "osu_latency":
                out.update(latency_us=r["latency_us"] * 1.02, seconds=r["latency_us"] * 1.02e-6 * 2 * 1000,
                           iterations=1000, skip=10)
            else:
                per_window = r["bytes_per_op"] / (r["bandwidth_gbps"] * 0.98 * 1e9)
                out.update(mb_per_s=r["bandwidth_gbps"] * 980, window=64, seconds=per_window * 20, iterations=20,
                           skip=2)
            out.update(verified=True, bytes_checked=2 * r["bytes"])
            lines.append(json.dumps(out))
    return lines


def test_device_reference_runs_only_for_gpu_aware_device_points():
    records = read_lines(TWO_GPUS)
    tests, sizes = osu.tests_and_sizes(records, "device")
    # 16 MiB on device (the GPU-aware defaults' end), past OSU's default 4 MiB that host points keep.
    assert tests == ["latency", "bw", "bibw"] and min(sizes) == 8 and max(sizes) == 16 << 20
    assert max(osu.tests_and_sizes(records, "host")[1]) == 1 << 20  # the host points this run measured
    assert osu.reference_arguments(tests, [1, 8], "device") == ["--tests", "latency,bw,bibw", "--sizes", "1,8",
                                                                "--buffers", "device", "--passes", "2"]
    assert "--buffers" not in osu.reference_arguments(tests, [1], "host")
    # Both sweeps in one launch, host first, each with its own sizes; the context is asked for on the host sweep.
    both = osu.sweeps_arguments([("host", ["latency"], [1]), ("device", ["bw"], [8])], gpu_context=True)
    assert both == ["--tests", "latency", "--sizes", "1", "--gpu-context", "--passes", "2", "--then",
                    "--tests", "bw", "--sizes", "8", "--buffers", "device", "--passes", "2"]
    # Where MPI did not report CUDA support, the engine skipped its device points: nothing to check.
    skipped = [dict(r, type="skip") if r.get("benchmark", "").startswith("mpi.gpu_aware.") else r for r in records]
    assert osu.tests_and_sizes(skipped, "device") == ([], [])
    # Host buffers: the host benchmarks only, never a GPU-aware variant.
    host_tests, _ = osu.tests_and_sizes([r for r in records if not r.get("benchmark", "").startswith("mpi.")
                                         or r["benchmark"].startswith("mpi.gpu_aware.")], "host")
    assert host_tests == []


def test_device_records_take_the_engines_device_movement_and_pair_with_that_variant_only(validator, engine_path):
    records = read_lines(TWO_GPUS)
    lines = device_lines(records)
    references = osu.reference_records(Engine(engine_path), lines, ranks=2, movements=osu.engine_movements(records))
    assert len(references) == len(lines) and all(r["type"] == "result" for r in references)
    for r in references:
        assert not [e.message for e in validator.iter_errors(r)], r["point"]
        assert r["params"]["buffers"] == "device" and r["params"]["reference_of"].startswith("mpi.gpu_aware.")
        # A reference loop's interface is "harness" (the vocabulary derives it from the movement,
        # whose reference_of is set); the mechanism it checks stays in the movement.
        assert (r["suite"], r["interface"]) == ("mpi-gpu", "harness")
        m = r["movement"]
        assert (m["from"]["allocator"], m["to"]["allocator"], m["from"]["gpu"], m["to"]["gpu"]) == ("device", "device", 0, 1)
        assert "-d cuda D D" in r["timing"]["method"]
    rows = osu.comparison_rows(records + references)
    device_rows = [x for x in rows if x.benchmark.startswith("mpi.gpu_aware.")]
    # One row per size of each GPU-aware benchmark: the device variant, not managed, pinned or pageable.
    assert len(device_rows) == len(lines)
    r = row(rows, "mpi.gpu_aware.bandwidth", 1 << 20)
    engine = next(x for x in records if x.get("type") == "result" and x["benchmark"] == "mpi.gpu_aware.bandwidth"
                  and x["bytes"] == 1 << 20 and x["params"]["allocator"] == "device")
    assert r.engine == pytest.approx(engine["bandwidth_gbps"] * 1000)
    assert r.ratio == pytest.approx(1 / 0.98) and r.verdict.text == "agrees"
    # Host rows are still there, from the host reference of the same run.
    assert any(x.benchmark == "mpi.bandwidth" for x in rows)


def test_a_refused_device_reference_is_a_skip_that_says_why(validator, engine_path):
    skips = Engine(engine_path).ingested(
        osu.reference_skips("the MPI library did not report CUDA support", ranks=2, tests=["bw"], buffers="device"))
    (s,) = skips
    assert s["params"]["reference_of"] == "mpi.gpu_aware.bandwidth" and s["params"]["buffers"] == "device"
    assert not [e.message for e in validator.iter_errors(s)]


def test_the_reference_holds_a_gpu_context_where_the_engines_ranks_do():
    """A CUDA build with MPI that sees a GPU binds each rank to it with a context from the start, so
    the host-buffer reference is asked to make one too; every other engine (engine info as each
    build really printed it) leaves the reference as plain OSU."""
    h100x2 = fixture_json("info_h100x2_cuda_mpi.json")  # `commatlas-engine info` on 2x H100
    assert osu.ranks_hold_gpu_context(h100x2)
    for plain in ("info_cuda_no_gpu.json", "info_host_only.json", "info_with_mpi.json"):
        assert not osu.ranks_hold_gpu_context(fixture_json(plain)), plain
    # Each MPI library's engine (--mpi a,b) says it for its own phases.
    from commatlas.io.engine import Engine
    from commatlas.run.mpi_libraries import build_of
    assert build_of(Engine(Path("commatlas-engine")), h100x2).gpu_context
    assert not build_of(Engine(Path("commatlas-engine")), fixture_json("info_with_mpi.json")).gpu_context
    tests = ["latency", "bw", "bibw"]
    assert "--gpu-context" in osu.reference_arguments(tests, [1], "host", gpu_context=True)
    # On device buffers the reference has a context anyway; the flag is for host buffers only.
    assert "--gpu-context" not in osu.reference_arguments(tests, [1], "device", gpu_context=True)
    line = json.dumps({"test": "osu_bw", "bytes": 64, "buffers": "host", "gpu_context": True, "mb_per_s": 180.0,
                       "window": 64, "seconds": 0.0023, "iterations": 100, "skip": 10, "verified": True,
                       "bytes_checked": 68})
    (measured,) = osu.reference_measurements([line], 2)
    assert "holding its GPU's CUDA context" in measured["timing"]["method"]
    (plain,) = osu.reference_measurements([line.replace('"gpu_context": true, ', "")], 2)
    assert "CUDA context" not in plain["timing"]["method"]
