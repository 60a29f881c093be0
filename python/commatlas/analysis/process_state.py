"""What a job's processes' copy level says of a figure that moved between two jobs.

A CUDA process keeps one of two levels for its small synchronous copies from its start, whatever
ran before it: on 2x H200 an 8 B copy to or from the GPU took 7.1-7.8 us in some fresh processes and
8.1-8.9 us in others. GPU-aware MPI moves a small device message with such copies, so its small
messages move with the level from one job to the next: over 24 fresh 2-rank jobs, osu_bw's 8 B
window of device messages read 287-312 us wherever the receiving rank had drawn the faster level,
and 410-475 us wherever it had drawn the slower (results/nvidia-h200-x2/gpu-aware-witness). The
engine times each rank's level right after the timed batches of every point of MPI over device
buffers (`timing.copy_level_us`), so a comparison of two jobs can tell that state from a change of
the tool: `copy_level_moved` says whether the ranks that pay for the point's messages copied at
another level in the other job, in the direction the figure moved.
"""
from __future__ import annotations

from statistics import median

from commatlas.io.results import Result

# Between the two jobs' readings of a paying rank: the nearer ends this far apart. The two levels'
# nearest readings on 2x H200 lay 7% apart (7.65 and 8.19 us, the receiving rank); one level's
# readings spread over 6% across jobs, and a job's own readings of it by far less.
LEVEL_APART = 1.05
# The most a copy level is taken to explain: the 8 B window moved 1.6x at most between the two
# levels; a figure that moved further moved for another reason too.
LEVEL_EXPLAINS = 2.0


def paying_ranks(result: Result) -> tuple[int, ...] | None:
    """The ranks whose copies a point's messages pay: the receiver of a one-way movement, both
    ends of a two-way one or a ping-pong; None where the movement names no ranks."""
    m = result.movement
    if m is None or m.source is None or m.target is None or m.source.rank is None or m.target.rank is None:
        return None
    return (m.target.rank,) if m.direction == "uni" else (m.source.rank, m.target.rank)


def _readings(results: list[Result], rank: int) -> list[float]:
    return [r.copy_level_us[rank] for r in results
            if len(r.copy_level_us) > rank and r.copy_level_us[rank] is not None]


def copy_level_moved(a: list[Result], b: list[Result], slower_in_b: bool, names: tuple[str, str]) -> str | None:
    """Where a rank that pays for these points' messages copied at another level in `b` than in
    `a`, in the direction the figure moved (`slower_in_b`: the figure got worse in `b`), in words
    ("rank 1's 8 B copies took 7.41 us in the baseline and 8.46 us in the other run: ..."); None
    where no such rank has readings on both sides that lie LEVEL_APART apart that way."""
    ranks = paying_ranks(a[0]) if a else None
    for rank in ranks or ():
        la, lb = _readings(a, rank), _readings(b, rank)
        if not la or not lb:
            continue
        apart = min(lb) >= LEVEL_APART * max(la) if slower_in_b else min(la) >= LEVEL_APART * max(lb)
        if apart:
            return (f"rank {rank}'s 8 B copies took {median(la):.3g} us in {names[0]} and {median(lb):.3g} us in "
                    f"{names[1]}: a CUDA process keeps one of two copy levels from its start, and each small "
                    "message through MPI's device path pays it")
    return None


def level_explains(a: list[Result], b: list[Result], figure_a: float, figure_b: float, metric: str,
                   names: tuple[str, str]) -> str | None:
    """copy_level_moved's words where they can explain a figure that moved from `figure_a` to
    `figure_b`: in the direction the level moved, and no more than LEVEL_EXPLAINS times."""
    if not (figure_a > 0 and figure_b > 0) or max(figure_a / figure_b, figure_b / figure_a) > LEVEL_EXPLAINS:
        return None
    slower_in_b = figure_b < figure_a if metric == "bandwidth" else figure_b > figure_a
    return copy_level_moved(a, b, slower_in_b, names)
