#!/usr/bin/env python3
"""Per MPI library of a run (commatlas run --mpi a,b): the 1-byte ping-pong latency and the peak
host-buffer bandwidth at 2 ranks, in the form the library comparisons use ("latency at 1 byte:
Open MPI 1.02 µs, MPICH 3.99 µs"), fastest first, with the OSU-method reference's figure beside
each where the run has it.

    PYTHONPATH=python python3 scripts/mpi_library_figures.py RUN_DIR
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from commatlas.io.results import load_run  # noqa: E402


def main(run_dir: str) -> int:
    run = load_run(run_dir)
    # (library, what) -> size -> the figure of each --repeat pass
    figures: dict[tuple[str, str], dict[int, list[float]]] = {}
    for r in run.results:
        if not r.mpi_library or r.ranks != 2 or not r.verified_ok or r.bytes is None:
            continue
        m = r.movement
        if m is None or any(e is not None and e.memory != "host" for e in (m.source, m.target)):
            continue
        what = {"mpi.pingpong": "latency", "mpi.bandwidth": "bw", "mpi.bibw": "bibw",
                "reference.osu_latency": "osu latency", "reference.osu_bw": "osu bw",
                "reference.osu_bibw": "osu bibw"}.get(r.benchmark)
        if what:
            value = r.latency_us if r.metric == "latency" else r.bandwidth_gbps
            figures.setdefault((r.mpi_library, what), {}).setdefault(r.bytes, []).append(value)
    libraries = sorted({lib for lib, _ in figures})

    def size(n: int) -> str:
        return next(f"{n // f} {u}" for f, u in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))
                    if n >= f and n % f == 0)

    def spread(values: list[float]) -> str:
        return f" [{min(values):.3g}–{max(values):.3g} over {len(values)} passes]" if len(values) > 1 else ""

    said = False
    latency = {lib: figures[(lib, "latency")][1] for lib in libraries if 1 in figures.get((lib, "latency"), {})}
    if latency:
        ranked = sorted(latency.items(), key=lambda kv: statistics.median(kv[1]))
        osu = {lib: figures.get((lib, "osu latency"), {}).get(1) for lib in libraries}
        print("latency at 1 byte (mpi.pingpong half round trip, host buffers, 2 ranks, median over passes): " + ", ".join(
            f"{lib} {statistics.median(v):.3g} µs{spread(v)}"
            + (f" (OSU method {statistics.median(osu[lib]):.3g} µs)" if osu.get(lib) else "") for lib, v in ranked))
        best_lib, best = ranked[0][0], statistics.median(ranked[0][1])
        for lib, v in ranked[1:]:
            print(f"  {lib} is {statistics.median(v) / best:.2f}x slower than {best_lib} at 1 byte")
        said = True
    for what, title in (("bw", "peak bandwidth (mpi.bandwidth, one way)"), ("bibw", "peak bidirectional bandwidth (mpi.bibw)")):
        peaks = {}
        for lib in libraries:
            by_size = figures.get((lib, what), {})
            if by_size:
                n, v = max(by_size.items(), key=lambda kv: statistics.median(kv[1]))
                peaks[lib] = (n, v)
        if peaks:
            ranked = sorted(peaks.items(), key=lambda kv: -statistics.median(kv[1][1]))
            print(f"{title}, host buffers, 2 ranks, best size's median over passes: " + ", ".join(
                f"{lib} {statistics.median(v):.3g} GB/s at {size(n)}{spread(v)}" for lib, (n, v) in ranked))
            said = True
    if not said:
        print(f"{run_dir}: no 2-rank host-buffer MPI figures with a library named")
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: mpi_library_figures.py RUN_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
