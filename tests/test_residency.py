"""Cache residency of latency chases, decided from the sweep's own latencies (residency.py), on a
real host run of the engine (tests/fixtures/report/host: a VM whose sysfs states a 32 MiB
last-level cache, where a 16 MiB chase read 170 ns and 64 MiB 219 ns)."""
from __future__ import annotations

from commatlas.analysis.answers import compute_answers
from commatlas.io.results import load_run
from commatlas.report.bestmap import bands, map_rows
from conftest import FIXTURES

HOST = FIXTURES / "report" / "host"
MiB = 1024 * 1024


def chase(run):
    return {r.bytes: r for r in run.results if r.benchmark == "host.pointer_chase"}


def test_a_chase_as_slow_as_memory_is_not_in_cache_whatever_the_capacity_says():
    points = chase(load_run(HOST))
    sixteen = points[16 * MiB]
    assert sixteen.movement.cache_resident is False
    assert sixteen.movement.residency == "measured"
    assert "at or above the midpoint" in sixteen.movement.residency_why
    # 4 MiB read 16 ns: near the cache level, in cache by measurement too.
    assert points[4 * MiB].movement.cache_resident is True
    assert points[4 * MiB].movement.residency == "measured"
    # The two ends are the levels themselves: the engine's capacity answer stands.
    assert points[4096].movement.residency == "capacity"
    assert points[64 * MiB].movement.cache_resident is False


def test_the_map_shows_the_memory_latency_from_16_mib():
    rows, _ = map_rows(compute_answers(load_run(HOST)))
    row = next(r for r in rows if "load latency" in r.label and "host memory" in r.label)
    memory = [b for b in bands(row) if "in cache" not in b.figures]
    assert memory and memory[0].low == 16 * MiB, [(b.sizes, b.figures) for b in bands(row)]


def test_a_sweep_that_never_leaves_the_cache_keeps_the_capacity_answer():
    run = load_run(HOST)
    for r in run.results:
        if r.benchmark == "host.pointer_chase" and r.bytes == 64 * MiB:
            run.results.remove(r)
            break
    # Re-measure without the 64 MiB point: 16 MiB is now the largest and nominally in cache.
    from commatlas.io.residency import measure_residency
    for r in run.results:
        if r.movement is not None and r.movement.residency == "measured":
            import dataclasses
            r.movement = dataclasses.replace(r.movement, cache_resident=True, residency="capacity", residency_why="")
    measure_residency(run)
    assert all(r.movement.residency == "capacity" for r in chase(run).values())
