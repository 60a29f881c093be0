"""The tuning answer: for a run with `--sweep-env` (or a `--tune` preset, commatlas.run.presets),
which setting was best per movement and size range, by how much over the run without it, and which
settings broke or slowed something. A preset run's baseline of each point is the pass with every
knob unset. A plain `--sweep-env` run without an unset value compares with the first value given
of each variable instead, and says so.

A gain is judged as the map judges a winner:
- a job's point whose figure did not repeat in a later batch, or that the host got in the way of
  in every pass (commatlas.analysis.host_activity.host_busy), never counts as a gain or a
  slowdown. As compare counts jobs (commatlas.analysis.repeats.side_unstable), a minority of such
  jobs is outvoted and the others are compared; otherwise the point is left out and listed;
- each setting runs in a job of its own, and on a VM a job can draw a state that every point of it
  keeps (on one H200 VM a one-thread 1 MiB copy read 12.9, 16.2 and 22.6 GB/s in three jobs of one
  setting, and one job of another setting read 32.8). With `--repeat`,
  a ratio within the spread of either side's jobs is noise; with one job per setting that spread
  is unknown, and the answer says so (`caveat`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from commatlas.analysis.host_activity import host_busy
from commatlas.analysis.repeats import side_unstable
from commatlas.io.points import params_key
from commatlas.io.records import UNSET
from commatlas.io.results import Failure, Result, Run
from commatlas.units import format_size as format_bytes

# A ratio this close to 1 is run-to-run noise, not a finding (medians of repeated passes of the
# same point on the machines we ran on moved by up to 3%).
CLEAR_GAIN = 1.05


# --- the answer -------------------------------------------------------------------------------

def _env(params: dict[str, Any]) -> dict[str, str]:
    return {k[4:]: str(v) for k, v in params.items() if k.startswith("env.")}


def _movement_key(point: Result | Failure) -> tuple[str, tuple[tuple[str, str], ...], int]:
    rest = tuple(kv for kv in params_key(point.params) if not kv[0].startswith("env."))
    return point.benchmark, rest, point.ranks


def _label(key: tuple[str, tuple[tuple[str, str], ...], int]) -> str:
    benchmark, params, ranks = key
    extra = " ".join(f"{k}={v}" for k, v in params)
    return f"{benchmark}{' ' + extra if extra else ''} ({ranks} rank{'s' if ranks != 1 else ''})"


def _baseline(variables: dict[str, list[str]]) -> tuple[dict[str, str], str]:
    base: dict[str, str] = {}
    words = []
    for name, values in variables.items():
        if UNSET in values:
            base[name] = UNSET
        else:
            base[name] = values[0]
            words.append(f"{name}={values[0]}")
    text = "every swept variable unset" if not words else \
        "no pass left " + ", ".join(w.split("=")[0] for w in words) + " unset: compared with " + ", ".join(words)
    return base, text


def _setting_of(env: dict[str, str], base: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if base.get(k) != v))


def _setting_text(setting: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting) or "the default"


def _bin(nbytes: int) -> int:
    """x4 size bins (as answers.json's): bin i holds (4^(i-1), 4^i] bytes, bin 0 up to 1 B."""
    return 0 if nbytes <= 1 else math.ceil(math.log(nbytes, 4) - 1e-9)


def _unsettled(r: Result) -> str | None:
    """Why a record's figure cannot carry a gain or a slowdown, in words; None where it can."""
    if r.stability == "unstable":
        return "its figure did not repeat in a later batch"
    busy = host_busy(r)
    return f"the host was busy in every pass ({busy})" if busy else None


def _typical(jobs: list[tuple[float, float, str | None]]) -> tuple[float, float]:
    """One side of a comparison over its jobs: the median over its jobs' medians and the wider cv of
    the job(s) at the middle. With an even count the median lies between the two middle jobs (their
    geometric mean): the upper one alone would make two jobs a side read as the slower of them (on
    1x H200 glibc's non-temporal stores off read "1.48x slower" at 1 MiB that way, where its two
    settled jobs read 1.10x and 1.48x the default's median)."""
    ordered = sorted(jobs, key=lambda job: (job[0], job[1]))
    low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    return math.sqrt(low[0] * high[0]), max(low[1], high[1])


def _apart(jobs: list[tuple[float, float, str | None]]) -> float:
    """How far a side's jobs' medians lie apart: slowest / fastest, 1 with one job."""
    medians = [job[0] for job in jobs]
    return max(medians) / min(medians)


def _range_text(low: int, high: int) -> str:
    return format_bytes(low) if low == high else f"{format_bytes(low)} to {format_bytes(high)}"


def tuning_answers(run: Run) -> dict[str, Any]:
    """Per movement and size range, the best swept setting and its gain over the baseline; the
    settings that broke (error records) or slowed a point. Empty answer lists for runs without
    swept variables."""
    variables: dict[str, list[str]] = defaultdict(list)
    for point in [*run.results, *run.failures]:
        for name, value in _env(point.params).items():
            if value not in variables[name]:
                variables[name].append(value)
    meta_sweeps = ((run.meta or {}).get("options") or {}).get("sweep_env") or []
    for sweep in meta_sweeps:  # the order the user gave, where the meta record has it
        name = str(sweep.get("name", ""))
        if name in variables:
            given = [str(v) for v in sweep.get("values", [])]
            variables[name] = [v for v in given if v in variables[name]] + [v for v in variables[name] if v not in given]
    answer: dict[str, Any] = {"format": "commatlas-tuning/1", "variables": dict(variables),
                              "baseline": "", "caveat": "", "answers": [], "slowed": [], "broke": [],
                              "left_out": []}
    if not variables:
        answer["baseline"] = "no --sweep-env or --tune in this run"
        return answer
    base, answer["baseline"] = _baseline(variables)

    # (movement, bytes) -> setting -> (median, cv, why the figure cannot be judged) per job
    medians: dict[tuple[Any, int], dict[tuple[tuple[str, str], ...], list[tuple[float, float, str | None]]]] = \
        defaultdict(lambda: defaultdict(list))
    for r in run.results:
        if r.bytes is None or not r.verified_ok or r.stats.median_s <= 0:
            continue
        medians[(_movement_key(r), r.bytes)][_setting_of(_env(r.params), base)].append(
            (r.stats.median_s, r.stats.cv or 0.0, _unsettled(r)))
    jobs = max((len(times) for by_setting in medians.values() for times in by_setting.values()), default=0)
    if jobs == 1:
        answer["caveat"] = ("One job per setting: a gain inside this machine's job-to-job spread cannot be told "
                            "from a real one; --repeat 3 measures that spread.")

    # gains[(movement, bin)][setting] -> ratios baseline time / setting time, one per size
    gains: dict[tuple[Any, int], dict[tuple[tuple[str, str], ...], list[tuple[int, float]]]] = \
        defaultdict(lambda: defaultdict(list))
    for (movement, nbytes), by_setting in medians.items():
        if () not in by_setting:
            continue
        base_jobs = [j for j in by_setting[()] if not j[2]]
        for setting, times in by_setting.items():
            if not setting:
                continue
            # Only jobs whose figure holds are compared; a side those do not outvote leaves it out.
            jobs_settled = [j for j in times if not j[2]]
            if any(side_unstable(len(side) - len(settled), len(side))
                   for side, settled in ((by_setting[()], base_jobs), (times, jobs_settled))):
                why = next(w for _, _, w in [*by_setting[()], *times] if w)
                answer["left_out"].append({
                    "movement": _label(movement), "benchmark": movement[0], "setting": dict(setting), "bytes": nbytes,
                    "why": why, "text": f"{_setting_text(setting)} against the default, {_label(movement)} at "
                                        f"{format_bytes(nbytes)}: not judged, {why}"})
                continue
            baseline, base_cv = _typical(base_jobs)
            t, cv = _typical(jobs_settled)
            # How far a side's jobs lie apart counts every job: an unsettled job's figure is not
            # compared, but the state it drew is the machine's too. On 2x H200 a default job whose
            # batches did not repeat read 10.96 GB/s at 1 MiB, the settled ones 13.0 and 14.2, and
            # OMPI_MCA_btl=self,vader's three jobs 10.4-12.0: with the settled jobs' spread alone,
            # that setting was "1.24x slower" (results/nvidia-h200-x2/host-mpi-btl-33).
            base_spread, spread = _apart(by_setting[()]), _apart(times)
            # Within the two points' own spread, or their jobs', a ratio is noise: count it as no change.
            ratio = baseline / t
            noise = max(CLEAR_GAIN, 1 + base_cv + cv, base_spread, spread)
            gain = 1.0 if abs(math.log(ratio)) < math.log(noise) else ratio
            gains[(movement, _bin(nbytes))][setting].append((nbytes, gain))

    # Per movement, walk the bins in size order and merge neighbours with the same best setting.
    per_movement: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for (movement, size_bin), by_setting in sorted(gains.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        scored = {s: math.exp(sum(math.log(g) for _, g in v) / len(v)) for s, v in by_setting.items()}
        best, gain = max(scored.items(), key=lambda kv: kv[1])
        sizes = [n for v in by_setting.values() for n, _ in v]
        cell = {"setting": best if gain >= CLEAR_GAIN else (), "gain": gain, "min": min(sizes), "max": max(sizes)}
        cells = per_movement[movement]
        if cells and cells[-1]["setting"] == cell["setting"]:
            cells[-1]["max"] = cell["max"]
            cells[-1]["gains"].append(gain)
        else:
            cells.append({**cell, "gains": [gain]})
        for setting, g in scored.items():
            if g <= 1 / CLEAR_GAIN:
                answer["slowed"].append({
                    "movement": _label(movement), "benchmark": movement[0], "setting": dict(setting),
                    "min_bytes": min(n for n, _ in by_setting[setting]), "max_bytes": max(n for n, _ in by_setting[setting]),
                    "gain": round(g, 3),
                    "text": f"{_setting_text(setting)} made {_label(movement)} {1 / g:.2f}x slower at "
                            f"{_range_text(min(n for n, _ in by_setting[setting]), max(n for n, _ in by_setting[setting]))}",
                })
    for movement, cells in per_movement.items():
        for c in cells:
            gain = math.exp(sum(math.log(g) for g in c["gains"]) / len(c["gains"]))
            where = _range_text(c["min"], c["max"])
            text = (f"for {_label(movement)} at {where}, {_setting_text(c['setting'])} is {gain:.2f}x faster than the default"
                    if c["setting"] else f"for {_label(movement)} at {where}, no setting beat the default beyond "
                                         f"the points' noise ({(CLEAR_GAIN - 1) * 100:.0f}% at least)")
            answer["answers"].append({
                "movement": _label(movement), "benchmark": movement[0], "params": dict(movement[1]), "ranks": movement[2],
                "min_bytes": c["min"], "max_bytes": c["max"], "setting": dict(c["setting"]) or None,
                "gain": round(gain, 3) if c["setting"] else None, "text": text,
            })
    seen = {(name, value) for p in [*run.results, *run.skips, *run.failures] for name, value in _env(p.params).items()}
    for sweep in meta_sweeps:
        for value in sweep.get("values", []):
            name, value = str(sweep.get("name", "")), str(value)
            if (name, value) not in seen and base.get(name) != value:
                answer["broke"].append({
                    "movement": None, "benchmark": None, "setting": {name: value}, "bytes": None, "sizes": [],
                    "message": "no record of this setting: the engine failed in its pass (engine.log says why)",
                    "text": f"{name}={value} broke the run: no record of it, the engine failed in its pass (see engine.log)",
                })
    # One entry per setting, movement and message, with every size it covers: a setting that takes
    # a variant off its route fails its largest size's wire check and leaves the others "not
    # measured" alike (NCCL_P2P_LEVEL=LOC on 4x H100 made five lines of one cause).
    broken: dict[tuple[Any, ...], list[int | None]] = {}
    for f in run.failures:
        setting = _setting_of(_env(f.params), base)
        if setting:
            broken.setdefault((setting, _movement_key(f), f.benchmark, f.message[:300]), []).append(f.bytes)
    for (setting, movement, benchmark, message), sizes in broken.items():
        known = sorted({s for s in sizes if s is not None}, reverse=True)
        where = f" at {', '.join(format_bytes(s) for s in sorted(known))}" if known else ""
        answer["broke"].append({
            "movement": _label(movement), "benchmark": benchmark, "setting": dict(setting),
            "bytes": known[0] if known else None, "sizes": known, "message": message,
            "text": f"{_setting_text(setting)} broke {benchmark}{where}: {message[:160]}",
        })
    return answer
