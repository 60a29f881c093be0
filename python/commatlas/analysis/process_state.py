"""What the ranks' copy level says of a figure that moved between two jobs.

A process's 8 B synchronous copies to and from its GPU run at one of a few levels, 0.7-1.6 us apart:
on 2x H200 between 7.3 and 9.7 us a copy (four VMs; most showed two levels, one three). A fresh
probe process mostly kept one level for its short life; the engine's ranks, read every tenth of a
second, stayed on one in some jobs and moved between them in others, whatever ran before. GPU-aware
MPI moves a small device message with such copies, so its small messages move with the receiving
rank's level: over 24 fresh 2-rank probe jobs osu_bw's 8 B window of device messages read 287-312 us
wherever the receiving rank copied at the faster level and 410-475 us wherever at the slower
(results/nvidia-h200-x2/gpu-aware-witness), and over 8 fresh `commatlas run` jobs
`mpi.gpu_aware.bandwidth` at 8 B split alike, 291-303 against 402-447 us a window
(results/nvidia-h200-x2/copy-level); a collective's small calls follow its slowest rank's. The
engine reads each rank's level right before and right after the timed batches of every point of MPI
over device buffers (`timing.copy_level_us`), so a comparison of two jobs can tell that state from a
change of the tool: `copy_level_moved` says whether a rank that pays for the point's messages held
one level through the point in each job, another in the other job, in the direction the figure
moved. A rank whose readings of a point disagree (its level changed during the point, or a copy
caught the machine busy) explains nothing.
"""
from __future__ import annotations

from statistics import median

from commatlas.io.results import Result

# A rank's level moved between two sides when every record's level on one lies this far beyond
# every record's level on the other. The
# two levels lay 13-17% apart (medians 7.45 and 8.45 us, 7.9 and 9.2, 8.0 and 9.4 on three 2x H200
# VMs); one level's medians moved up to 8% from job to job.
LEVEL_APART = 1.10
# A record's two readings of a rank (before and after its point's timed batches) held one level
# when they lie within this of each other: a rank that changed level during a point, or whose
# readings caught a slow copy, tells nothing of the state its point ran in. One
# level's readings of one point lay within 4% of each other in most points; single readings
# reached 10.5-11.5 us where the level read 9.3.
LEVEL_STEADY = 1.05
# The most a copy level is taken to explain: the 8 B window moved 1.6x at most between the two
# levels; a figure that moved further moved for another reason too.
LEVEL_EXPLAINS = 2.0


def paying_ranks(result: Result) -> tuple[int, ...] | None:
    """The ranks whose copies a point's messages pay: through GPU-aware MPI, the receiver of a
    one-way movement (the sender's level did not sort the 8 B windows; the receiver's did); staged,
    both ends (a copy to the host before each send, one back after each receive); both ends of a
    two-way movement or a ping-pong; every rank of a collective (its figure is the slowest rank's).
    None where the record has no readings."""
    m = result.movement
    if m is None or not result.copy_level_us:
        return None
    if m.source is None or m.target is None or m.source.rank is None or m.target.rank is None:
        return tuple(range(len(result.copy_level_us)))
    one_end = m.direction == "uni" and m.mechanism == "mpi_gpu_aware"
    return (m.target.rank,) if one_end else (m.source.rank, m.target.rank)


def _levels(results: list[Result], rank: int) -> list[float] | None:
    """The rank's level in each record (the median of its readings there), None where a record has
    none for it or its readings disagree (beyond LEVEL_STEADY): a record is one point of one job, and
    the jobs of one side (--repeat, check-order's rounds) may each have drawn their own level."""
    out = []
    for r in results:
        readings = [us for us in (r.copy_level_us[rank] if len(r.copy_level_us) > rank else ()) if us is not None]
        if not readings or max(readings) > LEVEL_STEADY * min(readings):
            return None
        out.append(median(readings))
    return out


# What a level that moved does to a figure, said after the readings unless the reader has it already
# (a table that says it once, below its rows).
LEVEL_WHY = (", steady before and after the timed batches: the machine copied at another speed, and each small "
             "message through MPI's device path pays it")


def copy_level_moved(a: list[Result], b: list[Result], slower_in_b: bool, names: tuple[str, str],
                     why: bool = True) -> str | None:
    """Where a rank that pays for these points' messages held its level through every record
    (LEVEL_STEADY) and every record of one side lies LEVEL_APART or more beyond every record of the
    other, in the direction the figure moved (`slower_in_b`: the figure got worse in `b`), in words
    ("rank 1's 8 B copies ... took 7.41 us in the baseline and 8.46 us in the other run", and LEVEL_WHY
    unless `why` is False, where the reader has it already); None where no paying rank did."""
    ranks = paying_ranks(a[0]) if a else None
    for rank in ranks or ():
        la, lb = _levels(a, rank), _levels(b, rank)
        if not la or not lb:
            continue
        apart = min(lb) >= LEVEL_APART * max(la) if slower_in_b else min(la) >= LEVEL_APART * max(lb)
        if apart:
            return (f"rank {rank}'s 8 B copies to and from its GPU took {_span(la)} us in {names[0]} and "
                    f"{_span(lb)} us in {names[1]}" + (LEVEL_WHY if why else ""))
    return None


def _span(levels: list[float]) -> str:
    lo, hi = min(levels), max(levels)
    return f"{lo:.3g}" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}-{hi:.3g}"


def level_explains(a: list[Result], b: list[Result], figure_a: float, figure_b: float, metric: str,
                   names: tuple[str, str], why: bool = True) -> str | None:
    """copy_level_moved's words where they can explain a figure that moved from `figure_a` to
    `figure_b`: in the direction the level moved, and no more than LEVEL_EXPLAINS times."""
    if not (figure_a > 0 and figure_b > 0) or max(figure_a / figure_b, figure_b / figure_a) > LEVEL_EXPLAINS:
        return None
    slower_in_b = figure_b < figure_a if metric == "bandwidth" else figure_b > figure_a
    return copy_level_moved(a, b, slower_in_b, names, why)
