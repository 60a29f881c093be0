"""The ranks' copy level as the witness of a move between two jobs (commatlas.analysis.process_state
and compare's use of it), on real records of 2x H200: fresh jobs of GPU-aware and staged
point-to-point MPI whose records keep each rank's 8 B copy time before and after every point's
timed batches (tests/fixtures/h200x2-copy-level, cut from results/nvidia-h200-x2/copy-level/call2).
Each explanation is also shown to fall away where the level did not move, moved the other way, or
did not hold through the point."""
from __future__ import annotations

import copy

from commatlas.analysis.compare import Verdict, compare_two, process_moved
from commatlas.analysis.process_state import LEVEL_APART, LEVEL_STEADY, paying_ranks
from commatlas.io.results import Result, run_from_records
from conftest import fixture_run, read_lines, slowed

COPY_LEVEL = fixture_run("h200x2-copy-level")


def records(job: int | str) -> list[dict]:
    folder = f"job-{job}" if isinstance(job, int) else job
    return read_lines(COPY_LEVEL / folder / "results.jsonl")


def point(recs: list[dict], benchmark: str, size: int) -> list[Result]:
    run = run_from_records(recs)
    return [r for r in run.results if r.benchmark == benchmark and r.bytes == size
            and r.params.get("allocator") == "device"]


def test_the_engine_keeps_the_level_for_mpi_over_device_buffers_only():
    run = run_from_records(records("default"))
    kept = {r.benchmark for r in run.results if r.copy_level_us}
    assert kept == {"mpi.gpu_aware.pingpong", "mpi.staged.pingpong"}
    assert {r.benchmark for r in run.results} >= {"mpi.bandwidth", "nccl.bandwidth"}  # host MPI, NCCL: none
    for r in run.results:
        if r.copy_level_us:
            # Per rank, before and after the timed batches, a copy of 8 B: microseconds, a few.
            assert len(r.copy_level_us) == 2 and all(len(pair) == 2 for pair in r.copy_level_us)
            assert all(5 < us < 15 for pair in r.copy_level_us for us in pair)


def test_who_pays_a_gpu_aware_message_is_its_receiver_and_a_staged_one_both_ends():
    job = run_from_records(records(2))
    first = {r.benchmark: r for r in job.results}
    assert paying_ranks(first["mpi.gpu_aware.bandwidth"]) == (1,)
    assert paying_ranks(first["mpi.gpu_aware.pingpong"]) == (0, 1)
    assert paying_ranks(first["mpi.gpu_aware.bibw"]) == (0, 1)
    assert paying_ranks(first["mpi.staged.bandwidth"]) == (0, 1)


def test_a_ping_pong_that_moved_with_its_ranks_copy_level_is_unstable_not_changed():
    # Job 2 against job 7, GPU-aware ping-pong at 8 B: 11.7 against 10.8 us, while rank 1's copies
    # took 9.43 us in job 2 and 8.07 us in job 7, steady before and after each point.
    a, b = point(records(2), "mpi.gpu_aware.pingpong", 8), point(records(7), "mpi.gpu_aware.pingpong", 8)
    verdict = process_moved(Verdict(True, "moved beyond the range"), a, b)
    assert (verdict.different, verdict.unstable) == (False, True)
    assert verdict.why.startswith("rank 1's 8 B copies to and from its GPU took 9.43 us in the baseline and "
                                  "8.07 us in the other run, steady before and after the timed batches")
    assert verdict.why.endswith("(moved: moved beyond the range)")
    # A point that did not change keeps its verdict: the witness only explains a change.
    assert process_moved(Verdict(False, "within ±6%"), a, b) == Verdict(False, "within ±6%")

    # The same move without the witness (records of an engine before it): a change.
    bare = [copy.deepcopy(r) for r in records(7)]
    for r in bare:
        r.get("timing", {}).pop("copy_level_us", None)
    assert process_moved(Verdict(True, "x"), a, point(bare, "mpi.gpu_aware.pingpong", 8)).different

    # The figure slower where the copies got faster is not the level's doing: still a change.
    slower = [slowed(r, 1.3) if r.get("benchmark") == "mpi.gpu_aware.pingpong" else r for r in records(7)]
    assert process_moved(Verdict(True, "x"), a, point(slower, "mpi.gpu_aware.pingpong", 8)).different


def test_a_level_that_moved_less_than_apart_or_did_not_hold_explains_nothing():
    # Job 4 against job 6, GPU-aware bandwidth at 8 B, 0.88x: rank 1, the receiver, copied at 8.81/8.71 us
    # in job 4 and 9.36/9.39 us in job 6, 7% apart: less than LEVEL_APART, so the move stays a change.
    a, b = point(records(4), "mpi.gpu_aware.bandwidth", 8), point(records(6), "mpi.gpu_aware.bandwidth", 8)
    rank1 = [us for r in a for us in r.copy_level_us[1]], [us for r in b for us in r.copy_level_us[1]]
    assert 1.0 < min(rank1[1]) / max(rank1[0]) < LEVEL_APART
    assert process_moved(Verdict(True, "x"), a, b).different
    # Rank 0 (the sender) moved further, 9.49/9.62 against 7.83/9.19 us, but it does not hold through
    # job 6's point (beyond LEVEL_STEADY) and a GPU-aware message does not pay the sender's copies.
    rank0 = [us for r in b for us in r.copy_level_us[0]]
    assert max(rank0) > LEVEL_STEADY * min(rank0)


def test_compare_of_two_real_jobs_names_the_witness_and_keeps_the_other_changes(narrow_compare_rule):
    # 13 points of MPI over device buffers: their far-out fence (±15%) holds the 0.89-0.92x moves
    comparison = compare_two(run_from_records(records(2)), run_from_records(records(7)))
    by_point = {(p.benchmark, p.size, p.variant.split(",")[0]): p for p in comparison.points}
    for size in (8, 4096, 65536):
        moved = by_point[("mpi.gpu_aware.pingpong", size, "allocator=device")]
        assert moved.verdict.unstable and not moved.verdict.different
        assert moved.verdict.why.startswith("rank 1's 8 B copies to and from its GPU took")
    # Staged bandwidth at 64 KiB moved 1.09x while no paying rank's level moved: a change.
    staged = by_point[("mpi.staged.bandwidth", 65536, "allocator=device")]
    assert staged.verdict.different and "copies" not in staged.verdict.why


def test_a_collective_is_paid_by_every_rank_and_its_move_is_named_by_the_rank_that_moved():
    # MPI collectives over device buffers keep the witness too (call 4 of the copy-level runs):
    # allreduce at 8 B read 26.1 us a call in job 1, both ranks copying at 7.6 us, and 31.5 us in
    # job 3, where both copied at 8.9-9.3 us.
    folder = fixture_run("h200x2-copy-level-collectives")
    job1, job3 = (read_lines(folder / f"job-{j}" / "results.jsonl") for j in (1, 3))
    a, b = point(job1, "mpi.gpu_aware.allreduce", 8), point(job3, "mpi.gpu_aware.allreduce", 8)
    assert paying_ranks(a[0]) == (0, 1)
    verdict = process_moved(Verdict(True, "x"), a, b)
    assert verdict.unstable and verdict.why.startswith(
        "rank 0's 8 B copies to and from its GPU took 7.61 us in the baseline and 9.21 us in the other run")
    # The same point with the figure moved the other way (job 3's call faster than job 1's) is a change.
    faster = [slowed(r, 0.7) if r.get("benchmark") == "mpi.gpu_aware.allreduce" else r for r in job3]
    assert process_moved(Verdict(True, "x"), a, point(faster, "mpi.gpu_aware.allreduce", 8)).different


def test_jobs_of_one_side_may_each_hold_their_own_level():
    # check-order's two rounds alone against the --quick run (call 5): GPU-aware reduce_scatter at
    # 8 B took 27.3 us a call in the run, where rank 0 copied at 7.77 us, and 31.5 and 32.5 us in
    # the two jobs alone, where it held 8.82 and 9.19 us through each point. Each job is steady, and
    # every job alone lies beyond the run: the witness explains the move, though the two jobs'
    # levels lie 4% apart from each other.
    folder = fixture_run("h200x2-copy-level-rounds")
    run = read_lines(folder / "default" / "results.jsonl")
    rounds = [r for n in (1, 2) for b in ("mpi.gpu_aware.reduce_scatter", "mpi.gpu_aware.bandwidth")
              for r in read_lines(folder / f"round-{n}" / b / "results.jsonl") if r.get("type") == "result"]
    a, b = point(run, "mpi.gpu_aware.reduce_scatter", 8), point(rounds, "mpi.gpu_aware.reduce_scatter", 8)
    assert len(b) == 2
    verdict = process_moved(Verdict(True, "x"), a, b)
    assert verdict.unstable and verdict.why.startswith(
        "rank 0's 8 B copies to and from its GPU took 7.77 us in the baseline and 8.82-9.19 us in the other run")
    # GPU-aware bandwidth at 8 B: 301.5 us a window in the run, 388-394 us alone, but the receiver's
    # levels alone (8.92 and 8.26 us) lie less than LEVEL_APART beyond the run's (7.85 us): a change.
    a, b = point(run, "mpi.gpu_aware.bandwidth", 8), point(rounds, "mpi.gpu_aware.bandwidth", 8)
    assert process_moved(Verdict(True, "x"), a, b).different
