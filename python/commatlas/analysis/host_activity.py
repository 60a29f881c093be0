"""What the host's own counters say of a point whose two passes disagreed (an "unstable" point):
whether, in its slower pass, a hypervisor ran something else on the VM's CPUs (steal), other
processes kept the node's CPUs busy, this job's threads were preempted more, or it faulted pages
in. The engine reads them around each pass (schema: $defs.host_activity); this module turns the
two passes into one phrase for the map and the report. A point whose every pass the host got in
the way of by the rules below is the host's even where its passes agree (`host_busy`): the map
shows it and crowns nothing there.

Rules (thresholds below): a share is named when the slower pass's reaches its threshold, as is
one CPU held by the hypervisor for HELD_CPU_NOTE of the pass or more (a parallel copy waits for
its slowest thread, so one held vCPU stalls it while the node's share stays small), and then the
figure's move is called the machine's; counts are named when the slower pass's rate per
second is at least COUNT_RATIO times the faster's, above a floor, and made of COUNT_FLOOR events
or more, so the ordinary preemptions of a busy thread pool are not taken for a cause (they are
stated, not judged: this job's own threads or fresh pages can raise them too).
Where nothing reaches a rule the phrase says so, with what the counters read (a little steal is
reported as such, never as none): the cause is then not one the host counts clearly (a state of
the hardware or of a library, for instance, or steal too brief for its clock ticks to show).

Each pass also carries where the host had put the job's CPUs (`cpu_pair`: a cache line's round
trip between two of them, engine/core/cpu_pair.h). Readings that lie PLACEMENT_APART or more
apart, between a point's passes or between two runs, say the host moved the CPUs in between: on
the 2-core VM its vCPUs sat where the pair read 54-139 ns, or where it read 311-435 ns, and a
shared-memory MPI ping-pong, the small MPI collectives and a 2-thread 16 B copy moved 3-6x with
them. Over 28 pairs of 8 identical runs there (results/cpu-2core/cpu-pair-witness), the gap
between two runs' readings of one point (2632 of them) was at most 2.0x or at least 2.5x.
"""
from __future__ import annotations

import math
from dataclasses import replace
from statistics import median
from typing import Any

from commatlas.io.results import Result

STEAL_NOTE = 0.10    # of the node's CPU time, taken by the hypervisor
HELD_CPU_NOTE = 0.25  # of the pass's window, taken from one CPU at least (most_stolen_cpu_s)
OTHERS_NOTE = 0.25   # of the node's CPU time, busy in other processes
COUNT_RATIO = 3.0    # slower pass's rate against the faster's
SWITCHES_FLOOR = 200.0  # preemptions a second
FAULTS_FLOOR = 1000.0   # page faults a second
COUNT_FLOOR = 20        # events in the slower pass: a rate made of a handful says nothing
PLACEMENT_APART = 2.2   # between two sets of CPU-pair round trips: the nearer ends this far apart
# The most a placement is taken to explain: a figure that moved more than this many times as far as
# its pair did moved for another reason too. Over the 575 moves the 2-core VM's 28 pairs of runs
# laid to the placement, a figure moved 0.32x as far as its pair at the median and 1.2x at most
# (the 2-thread 16 B copy: 6.3x against 5.2x); a planted 336x slowdown must stay a change.
PLACEMENT_EXPLAINS = 2.0


def _rate(activity: dict[str, Any], key: str) -> float:
    window = activity.get("window_s") or 0.0
    return float(activity.get(key) or 0) / window if window > 0 else 0.0


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def _machine_causes(activity: dict[str, Any]) -> list[str]:
    """What in one pass's host activity is the machine's by the rules above: steal (of the node,
    or one CPU held), other processes busy."""
    causes: list[str] = []
    steal, others = activity.get("steal_share"), activity.get("others_share")
    held, window = float(activity.get("most_stolen_cpu_s") or 0.0), float(activity.get("window_s") or 0.0)
    if steal is not None and steal >= STEAL_NOTE:
        causes.append(f"the hypervisor took {_percent(steal)} of the VM's CPU time (steal)")
    elif window > 0 and held >= HELD_CPU_NOTE * window:
        # A parallel operation waits for its slowest thread: one held vCPU stalls it.
        cpus = int(activity.get("steal_cpus") or 0)
        causes.append(f"the hypervisor held a CPU of the VM for at least {held * 1e3:.0f} ms of the pass's "
                      f"{window * 1e3:.0f} ms (steal, on {cpus} CPU{'s' if cpus != 1 else ''})")
    if others is not None and others >= OTHERS_NOTE:
        causes.append(f"other processes used {_percent(others)} of the node's CPU time")
    return causes


def pair_readings(results: list[Result]) -> list[tuple[float, tuple[int, ...]]]:
    """Every pass's CPU-pair round trip (ns) among these records, with the pair's CPUs."""
    out = []
    for r in results:
        for activity in r.pass_activity:
            pair = (activity or {}).get("cpu_pair")
            if pair and pair.get("round_trip_ns", 0) > 0:
                out.append((float(pair["round_trip_ns"]), tuple(pair.get("cpus") or ())))
    return out


def _ns_range(readings: list[tuple[float, tuple[int, ...]]]) -> str:
    lo, hi = min(r[0] for r in readings), max(r[0] for r in readings)
    return f"{lo:.0f} ns" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f} ns"


def placement_moved(a: list[Result], b: list[Result], names: tuple[str, str]) -> str | None:
    """Where every CPU-pair reading of one side lies PLACEMENT_APART or more beyond every reading
    of the other: the host had moved the job's CPUs between them, in words ("the host placed the
    job's CPUs apart: a cache line's round trip between CPUs 0 and 1 read 79-91 ns in the
    baseline, 668-743 ns in the other run"); None where either side has no reading or they do
    not lie apart."""
    ra, rb = pair_readings(a), pair_readings(b)
    if not ra or not rb:
        return None
    lo_a, hi_a = min(x for x, _ in ra), max(x for x, _ in ra)
    lo_b, hi_b = min(x for x, _ in rb), max(x for x, _ in rb)
    if lo_b < PLACEMENT_APART * hi_a and lo_a < PLACEMENT_APART * hi_b:
        return None
    cpus = sorted({c for _, pair in ra + rb for c in pair})
    between = (f"CPUs {cpus[0]} and {cpus[1]}" if len(cpus) == 2 else
               "the job's CPU pair (CPUs " + ", ".join(map(str, cpus)) + ")")
    return (f"the host placed the job's CPUs apart: a cache line's round trip between {between} read "
            f"{_ns_range(ra)} in {names[0]}, {_ns_range(rb)} in {names[1]}")


def pair_move(a: list[Result], b: list[Result]) -> float | None:
    """How far the CPU pair moved between two sets of records: the ratio of their readings'
    medians, 1 or more; None where either has none."""
    ra, rb = pair_readings(a), pair_readings(b)
    if not ra or not rb:
        return None
    ma, mb = median(x for x, _ in ra), median(x for x, _ in rb)
    return max(ma / mb, mb / ma)


def placement_explains(a: list[Result], b: list[Result], move: float, names: tuple[str, str]) -> str | None:
    """placement_moved's words where they can explain a figure that moved `move` times (1 or
    more) between `a` and `b`: no more than PLACEMENT_EXPLAINS times as far as the pair moved."""
    words = placement_moved(a, b, names)
    pair = pair_move(a, b)
    return words if words and pair is not None and move <= PLACEMENT_EXPLAINS * pair else None


def host_between(a: list[Result], b: list[Result], figure_a: float, figure_b: float,
                 names: tuple[str, str]) -> str:
    """What the host did that can explain two sets of records' figures apart, in words, for a
    self-check that sets a figure beside its reference: a pass of either side the host got in the
    way of (interference, named with its benchmark), else the two sides' CPUs placed apart by as
    much as the figures differ (placement_explains); "" where neither shows."""
    busy = next((f"{r.benchmark} {words}" for r in a + b if (words := interference(r))), "")
    if busy or not (figure_a > 0 and figure_b > 0):
        return busy
    return placement_explains(a, b, max(figure_a / figure_b, figure_b / figure_a), names) or ""


def interference(result: Result) -> str | None:
    """Where the machine got in the way of a record's passes by those rules, in words ("in its
    confirmation batch the hypervisor took 15% ..."); None where neither pass shows it. compare
    asks this of the worse run's records of a changed point: a figure the host interfered with
    cannot be held against one it left alone."""
    names = ("its own batches", "its confirmation batch")
    for name, activity in zip(names, result.pass_activity):
        causes = _machine_causes(activity) if activity else []
        if causes:
            return f"in {name} " + "; ".join(causes)
    return None


def host_busy(result: Result) -> str | None:
    """Where the host got in the way of every pass of a record by the rules above (steal, a CPU
    held, other processes busy), in words; None where a pass shows none of them, or the record
    carries no host activity. Such a figure is the machine's even where its passes agree: on 4x H100
    and 4x H200 (64 vCPUs) a 64-thread host.memcpy took 3.0 ms a copy, or 4, 5 or 6, whole
    milliseconds from 16 B to 16 MiB, with the hypervisor taking 17-45% of the VM's CPU time in
    both passes, and both passes agreed at 1 MiB in one run (results/nvidia-h200-x4/four-gpus-31)."""
    names = ("in its own batches", "in its confirmation batch")
    passes = [(name, activity) for name, activity in zip(names, result.pass_activity) if activity]
    causes = [(name, _machine_causes(activity)) for name, activity in passes]
    if not causes or not all(c for _, c in causes):
        return None
    return "; ".join(f"{name} " + "; ".join(c) for name, c in causes)


def host_witness(result: Result) -> str | None:
    """One phrase on the slower of the point's two passes, or None where the records carry no
    host activity for both (engines before it, or a point without a confirmation batch)."""
    modes, passes = result.stability_modes, result.pass_activity
    if len(modes) != 2 or len(passes) != 2 or not all(passes) or not all(m > 0 and math.isfinite(m) for m in modes):
        return None
    slow_i = 0 if modes[0] >= modes[1] else 1
    slow, fast = passes[slow_i], passes[1 - slow_i]
    which = "the point's own batches" if slow_i == 0 else "the confirmation batch"
    causes = _machine_causes(slow)
    # Between the passes, not in one of them: where the host had put the CPUs after each.
    moved = placement_explains([_one_pass(result, 1 - slow_i)], [_one_pass(result, slow_i)],
                               modes[slow_i] / modes[1 - slow_i], ("the faster pass", "the slower"))
    between = f"between the point's two passes {moved}" if moved else ""
    counted: list[str] = []
    steal, others = slow.get("steal_share"), slow.get("others_share")
    held = float(slow.get("most_stolen_cpu_s") or 0.0)
    for key, floor, words in (("involuntary_switches", SWITCHES_FLOOR, "preemptions of this job's threads"),
                              ("page_faults", FAULTS_FLOOR, "page faults")):
        slow_rate, fast_rate = _rate(slow, key), _rate(fast, key)
        if int(slow.get(key) or 0) >= COUNT_FLOOR and slow_rate >= floor and slow_rate >= COUNT_RATIO * fast_rate:
            counted.append(f"{words} ran at {slow_rate:,.0f}/s against {fast_rate:,.0f}/s in the faster pass")
    if causes or counted:
        # Steal and other processes are the machine's; more preemptions or faults may also come
        # from this job's own threads or pages, so they are stated, not judged.
        return (f"in the slower pass ({which}) " + "; ".join(causes + counted) + (f"; {between}" if between else "")
                + (": the machine's, not the tool's" if causes or between else ""))
    if between:
        return f"{between}: the machine's, not the tool's"
    if "cpu_ticks" not in slow:
        # A program outside the harness (the OSU method's) reads only where the host put its CPUs.
        readings = pair_readings([_one_pass(result, 0), _one_pass(result, 1)])
        where = (f"; the job's CPU pair read {_ns_range(readings)} in both passes, so the host had not moved "
                 "them" if len(readings) == 2 else "")
        return f"the slower pass ({which}) is a program's that reads no host counters{where}"
    if steal is None:
        ticks = int(slow.get("cpu_ticks") or 0)
        return (f"the slower pass ({which}) was too short for CPU shares ({ticks} clock tick"
                f"{'' if ticks == 1 else 's'}), and its preemptions and page faults were not above the faster pass's")
    # Nothing reached a rule: say what the counters read, small steal included, not "none".
    ticks = int(slow.get("cpu_ticks") or 0)
    stolen = round(steal * ticks)
    # Records before the per-CPU fields say nothing of single CPUs, so neither does the phrase.
    held_words = ("" if "most_stolen_cpu_s" not in slow else
                  f", one CPU held for at least {held * 1e3:.0f} ms" if held > 0 else ", no CPU surely held")
    return (f"in the slower pass ({which}) the host's counters name no cause: steal {_percent(steal)} of the VM's "
            f"CPU time ({stolen} of {ticks} ticks{held_words}), other processes {_percent(others or 0.0)}, "
            "no more preemptions or page faults than in the faster pass")


def _one_pass(result: Result, i: int) -> Result:
    """The record with only its pass `i`'s host activity (0: its own batches, 1: its confirmation)."""
    return replace(result, pass_activity=(result.pass_activity[i],))
