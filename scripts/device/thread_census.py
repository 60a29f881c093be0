#!/usr/bin/env python3
"""Which threads each engine rank runs, where they may run, and how much CPU they take while a
target family is measured.

The measuring thread of an MPI rank is pinned to one CPU (engine/core/affinity.h). A thread that a
library starts while that pin holds inherits the one CPU, and if it wakes it takes turns with the
measuring thread: latency-bound figures then pay for it. NCCL's threads are started in a scope that
widens the pin; other libraries' threads (the CUDA driver's, Open MPI's) are not. This samples
/proc so a case run after other benchmarks can be held against the same target alone.

  thread_census.py sample FILE           every 0.25 s until killed: one JSON line per rank
  thread_census.py summarize DIR TARGETS per DIR/round-*/CASE job: each rank's threads, with the
                                         CPU time each took between the samples
                                         nearest inside the first and the last
                                         TARGETS record (comma-separated benchmark keys)
"""
import json
import os
import sys
import time
from pathlib import Path

from commatlas.io.records import read_results_bytes
from commatlas.io.results import ResultsError, load_run

ENGINE_COMM = "commatlas-engin"  # /proc/PID/comm keeps 15 characters
HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def engine_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == ENGINE_COMM:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def rank_of(pid: int) -> str:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return "?"
    for item in environ:
        for name in (b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK="):
            if item.startswith(name):
                return item[len(name):].decode()
    return "?"


def thread_row(pid: int, tid: str) -> list | None:
    task = Path(f"/proc/{pid}/task/{tid}")
    try:
        stat = (task / "stat").read_text()
        status = (task / "status").read_text()
    except OSError:
        return None  # the thread ended between the listing and the read
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    # After the comm: state is field 3 of stat(5), utime 14, stime 15, processor 39.
    state, utime, stime, processor = fields[0], int(fields[11]), int(fields[12]), int(fields[36])
    allowed = next((line.split(":", 1)[1].strip() for line in status.splitlines()
                    if line.startswith("Cpus_allowed_list:")), "?")
    return [int(tid), comm, state, utime + stime, processor, allowed]


def sample(path: Path) -> None:
    ranks: dict[int, str] = {}
    with path.open("a") as out:
        while True:
            now = time.time()
            for pid in engine_pids():
                if pid not in ranks:
                    ranks[pid] = rank_of(pid)
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                rows = [r for r in (thread_row(pid, t) for t in tids) if r is not None]
                out.write(json.dumps({"t": round(now, 3), "pid": pid, "rank": ranks[pid], "threads": rows}) + "\n")
            out.flush()
            time.sleep(0.25)


def target_window(run_dir: Path, targets: set[str]) -> tuple[float, float] | None:
    try:
        times = [r.time for r in load_run(run_dir).results if r.benchmark in targets and r.time]
    except ResultsError:
        return None  # a case whose job left no records
    return (min(times), max(times)) if len(times) >= 2 else None


def sample_lines(work: Path) -> list[str]:
    """threads.jsonl as the sampler wrote it, or gzipped as the results folders keep it."""
    path = work / "threads.jsonl"
    return read_results_bytes(path if path.exists() else path.with_name(path.name + ".gz")).decode().splitlines()


def summarize(work: Path, targets: set[str]) -> None:
    samples: dict[int, list[dict]] = {}
    for line in sample_lines(work):
        s = json.loads(line)
        samples.setdefault(s["pid"], []).append(s)
    print("CPU seconds each thread took between samples inside the first and last target record; pinned = allowed on the measuring "
          "thread's one CPU")
    for run_dir in sorted(work.glob("round-*/*")):
        window = target_window(run_dir, targets) if run_dir.is_dir() else None
        if window is None:
            continue
        t0, t1 = window
        name = f"{run_dir.parent.name}/{run_dir.name}"
        for pid, rows in sorted(samples.items()):
            inside = [s for s in rows if t0 <= s["t"] <= t1]
            if len(inside) < 2:
                continue  # not this job's rank, or too short a window to tell
            first, last = inside[0], inside[-1]
            start = {r[0]: r for r in first["threads"]}
            main_allowed = start.get(pid, [None] * 6)[5]
            busy, pinned_others = [], 0
            for tid, comm, _, ticks, cpu, allowed in last["threads"]:
                began = start.get(tid)
                used = (ticks - began[3]) / HZ if began else None
                pinned = allowed == main_allowed and tid != pid
                pinned_others += pinned
                if tid == pid or (used or 0) > 0 or began is None:
                    busy.append(f"{'main' if tid == pid else comm}[{allowed}{' PINNED' if pinned else ''}]="
                                + (f"{used:.2f}s" if used is not None else "new"))
            print(f"{name:<28} rank {first['rank']} {last['t'] - first['t']:5.1f}s window, "
                  f"{len(last['threads'])} threads, {pinned_others} others on the measuring CPU: " + " ".join(busy))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "sample":
        sample(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "summarize":
        summarize(Path(sys.argv[2]), set(sys.argv[3].split(",")))
    else:
        print("usage: thread_census.py sample FILE | summarize DIR TARGETS", file=sys.stderr)
        sys.exit(2)
