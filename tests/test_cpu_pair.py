"""Where the host put the job's CPUs (schema $defs.host_activity.cpu_pair, engine/core/cpu_pair.h):
every pass records a cache line's round trip between two of the job's CPUs, and a point that moved
between two runs while those readings lay PLACEMENT_APART or more apart moved with the machine.

The fixture is two of eight identical default runs on the 2-core VM (results/cpu-2core/
cpu-pair-witness): in one the host kept the two vCPUs near each other, in the other far apart, and
the shared-memory MPI figures and the 2-thread copies moved 2-4x with them."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from commatlas.analysis.agreement import Kind
from commatlas.analysis.compare import compare_runs
from commatlas.analysis.harness_check import harness_check
from commatlas.analysis.host_activity import PLACEMENT_APART, host_witness, pair_readings, placement_moved
from commatlas.io.results import load_run
from conftest import fixture_run, read_lines, slowed

RUNS = fixture_run("cpu-2core-cpu-pair")
NEAR, FAR = RUNS / "near", RUNS / "far"
WORDS = "the host placed the job's CPUs apart"


def _activities(record: dict) -> list[dict]:
    if record["type"] == "result":
        return [record["timing"]["host_activity"]]
    if record["type"] == "stability" and "host_activity" in record["stability"]:
        return [record["stability"]["host_activity"]]
    return []


def _rewritten(run: Path, out: Path, edit) -> Path:
    """A copy of a real run with `edit(record)` applied to each record."""
    out.mkdir(parents=True)
    lines = [edit(r) for r in read_lines(run / "results.jsonl")]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return out


def _placed_as(run: Path, ns: float):
    """An edit that sets every pass's CPU-pair reading to `ns`: the run as if its host had kept the
    CPUs where that reading says."""
    def edit(record: dict) -> dict:
        for activity in _activities(record):
            if activity.get("cpu_pair"):
                activity["cpu_pair"]["round_trip_ns"] = ns
        return record
    return edit


def _median_reading(run: Path, ranks: int) -> float:
    readings = sorted(x for r in load_run(run).results if r.ranks == ranks for x, _ in pair_readings([r]))
    return readings[len(readings) // 2]


def test_every_pass_of_both_runs_carries_its_pair(validator) -> None:
    for run in (NEAR, FAR):
        records = read_lines(run / "results.jsonl")
        for number, record in enumerate(records, 1):
            problems = [e.message for e in validator.iter_errors(record)]
            assert not problems, f"{run.name} line {number}: {problems[:3]}"
        activities = [a for r in records for a in _activities(r)]
        assert activities and all(a["cpu_pair"] and a["cpu_pair"]["cpus"] == [0, 1] for a in activities)
    # The two placements: near in one run, far in the other, in the single process and the MPI job.
    for ranks in (1, 2):
        assert _median_reading(FAR, ranks) >= 3 * _median_reading(NEAR, ranks)


def test_compare_lays_the_moves_of_a_far_placement_to_the_host() -> None:
    [c] = compare_runs([NEAR, FAR])
    laid = [p for p in c.points if WORDS in p.verdict.why]
    assert {p.benchmark for p in laid} >= {"mpi.pingpong", "host.memcpy"}, [p.verdict.why for p in laid]
    assert all(p.verdict.unstable and not p.verdict.different for p in laid)
    # Each says where the pair read in each run.
    assert all(" ns in the baseline, " in p.verdict.why and " ns in the other run" in p.verdict.why for p in laid)
    # No point whose runs' readings lie apart is left changed.
    near, far = load_run(NEAR), load_run(FAR)
    for p in c.points:
        if p.verdict.different:
            a = [r for r in near.results if r.benchmark == p.benchmark and r.bytes == p.size]
            b = [r for r in far.results if r.benchmark == p.benchmark and r.bytes == p.size]
            assert placement_moved(a, b, ("a", "b")) is None, p.verdict.why


def test_the_osu_method_s_own_job_carries_its_pair_and_is_judged_alike() -> None:
    """The OSU-method reference runs as a job of its own, after the engine's, so it reads its own
    pair after each pass: its moves between the runs are laid to the host by the same rule."""
    for run in (NEAR, FAR):
        osu = [r for r in load_run(run).results if r.benchmark.startswith("reference.osu")]
        assert osu and all(len(pair_readings([r])) == 2 for r in osu)
        # Its records carry only the window and the pair: the program reads no host counters.
        assert all(set(a) == {"window_s", "cpu_pair"} for r in osu for a in r.pass_activity)
    [c] = compare_runs([NEAR, FAR])
    osu = [p for p in c.points if p.benchmark.startswith("reference.osu")]
    assert [p for p in osu if WORDS in p.verdict.why]
    assert not [p for p in osu if p.verdict.different], [p.verdict.why for p in osu if p.verdict.different]


def test_without_the_readings_apart_the_machine_s_moves_pass_for_noise_or_change(tmp_path: Path) -> None:
    """The far run with its readings set to the near run's, as compare saw such runs before the
    witness: the machine's 3-6x moves set the tolerance (±3x and more), so some 4x moves pass as
    "within" it and the largest are called changes. With the readings, no point is judged, and the
    rule says why."""
    [c] = compare_runs([NEAR, FAR])
    assert c.rule.text.startswith("none: the host had put the job's CPUs apart"), c.rule.text
    assert not c.different and all(p.verdict.unstable for p in c.points)
    same_place = _rewritten(FAR, tmp_path / "far-placed-near", _placed_as(FAR, _median_reading(NEAR, 2)))
    [again] = compare_runs([NEAR, same_place])
    assert not [p for p in again.points if WORDS in p.verdict.why]
    assert again.rule.of("latency", 64).value >= 2.0, again.rule.text
    copies = {p.size: p for p in again.points if p.benchmark == "host.memcpy" and "threads=2" in p.variant}
    assert copies[16].verdict.different and copies[16].improvement < 0.25
    assert not copies[4096].verdict.different and copies[4096].improvement < 0.3, copies[4096].verdict.why


def test_a_planted_15_percent_slowdown_where_the_host_stayed_is_flagged(tmp_path: Path) -> None:
    """The near run against itself with every time 15% longer: the CPUs sat where they sat, so the
    slowdown is a change, not the host's."""
    slow = _rewritten(NEAR, tmp_path / "near-slowed", lambda r: slowed(r, 1.15))
    [c] = compare_runs([NEAR, slow])
    assert len(c.different) >= 0.5 * (len(c.points) - len(c.unstable))
    assert all(p.improvement < 1 for p in c.different)
    assert not [p for p in c.points if WORDS in p.verdict.why]


def test_a_move_far_beyond_the_placement_s_own_stays_a_change(tmp_path: Path) -> None:
    """The far run with its 8 B allgather (4x slower with the placement alone) 50x as slow again:
    its CPU pair moved about 5x, and a placement explains a move of that size, not 200x
    (PLACEMENT_EXPLAINS), so it is a change even where no other point can be judged."""
    far = _rewritten(FAR, tmp_path / "far-50x",
                     lambda r: slowed(r, 50.0) if r.get("benchmark") == "mpi.allgather" and r.get("bytes") == 8 else r)
    [c] = compare_runs([NEAR, far])
    [point] = [p for p in c.points if p.benchmark == "mpi.allgather" and p.size == 8]
    assert point.verdict.different and "more than the host's placement of the CPUs explains" in point.verdict.why, \
        point.verdict.why
    # Its neighbours, moved by the placement alone, stay the host's.
    others = [p for p in c.points if p.benchmark == "mpi.allgather" and p.size != 8]
    assert others and all(p.verdict.unstable and not p.verdict.different for p in others)


def test_the_rule_is_apart_by_placement_apart() -> None:
    record = next(r for r in load_run(NEAR).results if r.benchmark == "mpi.pingpong")

    def at(ns: float):
        return [replace(record, pass_activity=({"cpu_pair": {"cpus": [0, 1], "round_trip_ns": ns}},))]

    assert placement_moved(at(100), at(100 * PLACEMENT_APART * 0.99), ("a", "b")) is None
    assert placement_moved(at(100), at(100 * PLACEMENT_APART), ("a", "b"))
    assert placement_moved(at(100 * PLACEMENT_APART), at(100), ("a", "b"))
    assert placement_moved(at(100), [], ("a", "b")) is None


def _far_copy_made_unstable(tmp_path: Path, faster: float) -> str | None:
    """The far run's 2-thread copy at 16 B made unstable, its confirmation `faster` times as fast
    and read where the near run had the CPUs: the map's phrase for that point."""
    point = next(r.point for r in load_run(FAR).results if r.benchmark == "host.memcpy" and r.bytes == 16
                 and "threads=2" in r.point)
    near_ns = _median_reading(NEAR, 1)

    def edit(record: dict) -> dict:
        if record.get("point") == point and record["type"] == "stability":
            st = record["stability"]
            first = st["passes_median_s"][0]
            st.update(verdict="unstable", passes_median_s=[first, first / faster], spread=faster - 1)
            st["host_activity"]["cpu_pair"]["round_trip_ns"] = near_ns
        return record
    run = load_run(_rewritten(FAR, tmp_path / f"far-unstable-{faster:g}x", edit))
    [result] = [r for r in run.results if r.point == point]
    return host_witness(result)


def test_an_unstable_point_whose_passes_met_two_placements_says_so(tmp_path: Path) -> None:
    """4x between the passes, the pair about 5x: the map's phrase names the move."""
    words = _far_copy_made_unstable(tmp_path, 4.0)
    assert words and words.startswith("between the point's two passes " + WORDS), words
    assert words.endswith(": the machine's, not the tool's"), words


def test_a_pass_far_beyond_the_placement_s_move_is_not_laid_to_it(tmp_path: Path) -> None:
    """40x between the passes: the pair moved about 5x, too little to explain that, so the phrase
    does not lay the move to the placement."""
    words = _far_copy_made_unstable(tmp_path, 40.0)
    assert words and WORDS not in words, words


def test_the_harness_check_lays_a_miss_across_placements_to_the_host(tmp_path: Path) -> None:
    """The near run with its bare host loops as if measured where the far run's host had the CPUs
    (4x the reading, and half the bandwidth): the harness check's misses there are the host's."""
    def edit(record: dict) -> dict:
        if record.get("benchmark") == "reference.host_memcpy":
            record = slowed(record, 2.0)
            for activity in _activities(record):
                activity["cpu_pair"]["round_trip_ns"] *= 4
        return record
    check = harness_check(load_run(_rewritten(NEAR, tmp_path / "near-bare-far", edit)))
    host = [p for p in check.pairs if p.verdict.kind is Kind.HOST]
    assert host and all(WORDS in p.verdict.text for p in host), [p.verdict.text for p in check.pairs]
    plain = harness_check(load_run(NEAR))
    assert not [p for p in plain.pairs if p.verdict.kind is Kind.HOST and WORDS in p.verdict.text]
