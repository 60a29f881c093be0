#!/usr/bin/env python3
"""Per MPI library of a run (commatlas run --mpi a,b): the 1-byte ping-pong latency and the peak
host-buffer bandwidth at 2 ranks, in the form the library comparisons use ("latency at 1 byte:
Open MPI 1.02 µs, MPICH 3.99 µs"), fastest first, with the OSU-method reference's figure beside
each where the run has it.

    PYTHONPATH=python python3 scripts/mpi_library_figures.py RUN_DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from commatlas.results import load_run  # noqa: E402


def main(run_dir: str) -> int:
    run = load_run(run_dir)
    latency: dict[str, tuple[float, int]] = {}
    bandwidth: dict[str, tuple[float, int]] = {}
    bibw: dict[str, tuple[float, int]] = {}
    osu: dict[tuple[str, str], float] = {}
    for r in run.results:
        if not r.mpi_library or r.ranks != 2 or not r.verified_ok or r.bytes is None:
            continue
        m = r.movement
        host = m is not None and all(e is None or e.memory == "host" for e in (m.source, m.target))
        if not host:
            continue
        if r.benchmark == "mpi.pingpong" and r.bytes == 1:
            latency[r.mpi_library] = (r.latency_us, r.bytes)
        elif r.benchmark == "mpi.bandwidth" and r.bandwidth_gbps > bandwidth.get(r.mpi_library, (0, 0))[0]:
            bandwidth[r.mpi_library] = (r.bandwidth_gbps, r.bytes)
        elif r.benchmark == "mpi.bibw" and r.bandwidth_gbps > bibw.get(r.mpi_library, (0, 0))[0]:
            bibw[r.mpi_library] = (r.bandwidth_gbps, r.bytes)
        elif r.benchmark == "reference.osu_latency" and r.bytes == 1:
            osu[(r.mpi_library, "latency")] = r.latency_us

    def size(n: int) -> str:
        return next(f"{n // f} {u}" for f, u in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))
                    if n >= f and n % f == 0)

    if latency:
        ranked = sorted(latency.items(), key=lambda kv: kv[1][0])
        print("latency at 1 byte (mpi.pingpong, half round trip, host buffers, 2 ranks): " + ", ".join(
            f"{lib} {v:.3g} µs" + (f" (OSU method {osu[(lib, 'latency')]:.3g})" if (lib, "latency") in osu else "")
            for lib, (v, _) in ranked))
        if len(ranked) > 1:
            best_lib, (best, _) = ranked[0]
            print("  " + "; ".join(f"{lib} is {v / best:.2f}x slower than {best_lib}" for lib, (v, _) in ranked[1:]))
    for title, table in (("peak bandwidth (mpi.bandwidth, one way)", bandwidth), ("peak bidirectional bandwidth (mpi.bibw)", bibw)):
        if table:
            ranked = sorted(table.items(), key=lambda kv: -kv[1][0])
            print(f"{title}, host buffers, 2 ranks: " + ", ".join(
                f"{lib} {v:.3g} GB/s at {size(n)}" for lib, (v, n) in ranked))
    if not (latency or bandwidth or bibw):
        print(f"{run_dir}: no 2-rank host-buffer MPI figures with a library named")
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: mpi_library_figures.py RUN_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
