"""Writes a synthetic full-node run of N result records (default 100,000) and times its report.

The shape follows an 8-GPU node: every GPU pair × copy/access interfaces × directions, host
transfers per allocator, point-to-point and collectives per rank count, host memcpy per thread
count; 256 samples per record (the engine's reservoir), sizes 1 B .. 1 GiB ×2.
Usage: python tests/perf/make_big_run.py OUT_DIR [--records N] [--report]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures" / "report"))
import synth  # noqa: E402

SIZES = [2**i for i in range(31)]
GPUS = 8
SAMPLES = 256


def families():
    """(benchmark, category, interface, metric, params, latency s, GB/s, ranks, collective): the
    small families first, so that any record count holds every kind."""
    pairs = [(a, b) for a in range(GPUS) for b in range(GPUS) if a != b]
    copy = [("gpu.ce_copy", "explicit_copy", "copy_engine", 8e-6, 380), ("gpu.sm_copy", "explicit_copy", "sm_kernel", 2e-6, 300),
            ("gpu.sm_read", "direct_access", "sm_kernel", 2e-6, 350), ("gpu.sm_write", "direct_access", "sm_kernel", 2e-6, 360),
            ("p2p.cuda_ipc_ce", "point_to_point", "cuda_ipc", 12e-6, 370), ("p2p.nccl_sendrecv", "point_to_point", "nccl", 20e-6, 340),
            ("p2p.mpi_gpu_aware", "point_to_point", "mpi_gpu_aware", 5e-6, 300)]
    for alloc, gbps in [("pageable", 10), ("registered", 50), ("pinned", 52), ("managed", 30)]:
        for bench, iface in [("gpu.h2d_copy", "copy_engine"), ("gpu.d2h_copy", "copy_engine"), ("gpu.h2d_sm", "sm_kernel")]:
            for gpu in range(GPUS):
                ends = {"src": gpu, "dst": "host"} if bench.startswith("gpu.d2h") else {"src": "host", "dst": gpu}
                yield bench, "explicit_copy", iface, "bandwidth", {**ends, "allocator": alloc}, 10e-6, gbps, 1, None
    for op, factor in [("allreduce", 2), ("allgather", 1), ("reduce_scatter", 1), ("alltoall", 1), ("broadcast", 1), ("reduce", 1)]:
        for ranks in (2, 4, 8):
            f = factor * (ranks - 1) / ranks if op != "broadcast" and op != "reduce" else 1
            yield f"coll.nccl_{op}", "collective", "nccl", "bandwidth", {"memory": "device"}, 25e-6, 200, ranks, (op, f)
            yield f"coll.mpi_{op}", "collective", "mpi", "bandwidth", {"memory": "device"}, 4e-6, 5, ranks, (op, f)
    for threads in (1, 2, 4, 8, 16):
        yield "host.memcpy", "explicit_copy", "memcpy", "bandwidth", {"threads": threads, "src_numa": 0, "dst_numa": 0}, 0.1e-6, 10 * threads**0.5, 1, None
    for direction in ("unidirectional", "bidirectional", "all_pairs"):
        for allocator in ("device", "device_pool", "managed"):
            for bench, cat, iface, lat, gbps in copy:
                for src, dst in pairs:
                    yield (bench, cat, iface, "bandwidth", {"src": src, "dst": dst, "direction": direction,
                           "allocator": allocator}, lat, gbps, 1, None)


def records(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    jitter = [rng.lognormal(0, 0.03, SAMPLES) for _ in range(64)]
    count = 0
    for fam in families():
        bench, cat, iface, metric, params, lat, gbps, ranks, coll = fam
        for b in SIZES:
            if count >= n:
                return
            samples = (lat + b / (gbps * 1e9)) * jitter[count % 64]
            peak = (synth.NVLINK4_PAIR_GBPS, "nvlink") if isinstance(params.get("src"), int) else None
            yield synth.result(bench, cat, iface, metric, params, b, samples, ranks=ranks, peak=peak, collective=coll)
            count += 1
    if count < n:
        raise SystemExit(f"the node's families hold only {count} distinct points")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--report", action="store_true", help="time write_report on it")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "results.jsonl", "w") as f:
        f.write(json.dumps(synth.meta(GPUS, "big-synthetic")) + "\n")
        for r in records(a.records):
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
        f.write(json.dumps(synth.end("complete", results=a.records, skipped=0, errors=0)) + "\n")
    print(f"wrote {a.records} records, {(a.out / 'results.jsonl').stat().st_size / 1e6:.0f} MB")
    if a.report:
        from commatlas.report import write_report
        t = time.perf_counter()
        paths = write_report(a.out)
        print(f"report in {time.perf_counter() - t:.1f} s: {paths.html} {paths.html.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
