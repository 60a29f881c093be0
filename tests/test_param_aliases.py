"""Old records stay readable and comparable after a param was renamed: the reader maps older
spellings of a buffer's placement (`host_alloc`, `device_alloc`, the direct-access kernels'
`location` and `alloc`) to today's names once (commatlas.io.records.PARAM_ALIASES), so that
`commatlas compare OLD NEW` matches every point of a run written before the rename with the same
point written after it."""
from __future__ import annotations

import json
from pathlib import Path

from commatlas.analysis.compare import compare_two
from commatlas.io.records import PARAM_ALIASES, current_params, read_records
from commatlas.io.results import load_run
from commatlas.io.vocabulary import VOCABULARY
from conftest import fixture_run

# A default run of 2x H200 written before the rename (the curated cut of
# results/nvidia-h200-x2/atlas-2gpu): every copy, STREAM kernel, chase and prefetch.
OLD_RUN = fixture_run("h200x2-atlas-2gpu") / "default"
OLD_NAMES = {"host_alloc", "device_alloc", "alloc", "location"}
DIRECT_ACCESS = ("gpu.stream_read", "gpu.stream_write", "gpu.stream_copy", "gpu.pointer_chase",
                 "host.pointer_chase_gpu_memory")
# What today's engine writes for each old `location` (its variants: engine/backends/cuda/placement.cpp).
HINT_OF_LOCATION = {"managed": "none", "managed_prefetched": "prefetched",
                    "managed_host_preferred": "preferred_location_host"}


def as_written_today(record: dict) -> dict:
    """An old record as today's engine writes that point, spelled out here apart from the reader's
    table: the copies' allocators renamed, gpu.prefetch's one buffer `allocator`, and a STREAM
    kernel's or chase's location as its allocator, managed hint and the GPU whose memory it is."""
    params, benchmark = record.get("params") or {}, record.get("benchmark", "")
    out: dict = {}
    if benchmark in DIRECT_ACCESS and "location" in params:
        out["allocator"] = params["alloc"]
        out["first_touch"] = params["first_touch"]
        if params["location"] in HINT_OF_LOCATION:
            out["managed_hint"] = HINT_OF_LOCATION[params["location"]]
    for name, value in params.items():
        if benchmark in DIRECT_ACCESS and name in ("location", "alloc", "first_touch"):
            continue
        if name == "host_alloc":
            name = "allocator" if benchmark == "gpu.prefetch" else "host_allocator"
        elif name == "device_alloc":
            name = "device_allocator"
        out[name] = value
    return {**record, "params": out}


def test_old_records_read_in_todays_names() -> None:
    run = load_run(OLD_RUN)
    assert not [r for r in run.results + run.skips + run.failures if OLD_NAMES & set(r.params)]
    raw = [r for r in read_records(OLD_RUN / "results.jsonl") if r.get("type") == "result"]
    assert not [r for r in raw if OLD_NAMES & set(r.get("params") or {})]
    def places(points: list, benchmark: str) -> set:
        return {(r.params["allocator"], r.params["memory_gpu"], r.params.get("managed_hint"))
                for r in points if r.benchmark == benchmark}
    # Local and peer HBM, pinned; pageable memory was out of the H200's reach; managed memory is --full.
    assert places(run.results, "gpu.stream_read") == {("device", 0, None), ("device", 1, None), ("pinned", 0, None)}
    assert places(run.skips, "gpu.stream_read") == {("pageable", 0, None)}
    assert places(run.results, "host.pointer_chase_gpu_memory") == {("pinned", 0, None), ("managed", 0, "none")}
    assert {r.params["allocator"] for r in run.results if r.benchmark == "gpu.prefetch"} == {"managed"}
    h2d = [r for r in run.results if r.benchmark == "gpu.copy_ce" and r.params.get("path") == "h2d"]
    assert {r.params["host_allocator"] for r in h2d} >= {"pinned", "pageable", "managed"}
    # The record's endpoint says the same allocator the params now name.
    assert all(r.movement.source.allocator == r.params["host_allocator"] for r in h2d)


def test_every_old_location_maps_to_the_params_the_engine_writes_for_it() -> None:
    """Today's variants (engine/tests/fixtures/tiers.txt has the managed ones, written by the engine)."""
    shape = {"vector_bytes": 16, "unroll": 4, "blocks_per_sm": 4, "threads_per_block": 256}
    for location, alloc, touch, memory_gpu, hint in [
            ("local", "device", "gpu", 0, None), ("peer", "device", "gpu", 1, None), ("pinned", "pinned", "cpu", 0, None),
            ("pageable", "pageable", "cpu", 0, None), ("managed", "managed", "cpu", 0, "none"),
            ("managed_prefetched", "managed", "cpu", 0, "prefetched"),
            ("managed_host_preferred", "managed", "cpu", 0, "preferred_location_host")]:
        old = {"location": location, "alloc": alloc, "first_touch": touch, "gpu": 0, "memory_gpu": memory_gpu, **shape}
        today = {"allocator": alloc, "first_touch": touch, **({"managed_hint": hint} if hint else {}), "gpu": 0,
                 "memory_gpu": memory_gpu, **shape}
        assert current_params("gpu.stream_copy", old) == today, location
    # The same names elsewhere are not these benchmarks' placement: left alone.
    assert current_params("torch.ddp", {"location": "x"}) == {"location": "x"}


def test_new_names_are_the_engines_and_old_ones_are_gone() -> None:
    """Every name the table maps to is a param the engine consumes into the movement (or the managed
    hint, a choice); no old name is one of them any more."""
    consumed = {p["name"] for p in VOCABULARY["param"]}
    assert {row[3] for row in PARAM_ALIASES if row[3]} <= consumed | {"managed_hint"}
    assert not {row[1] for row in PARAM_ALIASES} & consumed
    assert current_params("gpu.copy_ce", {"path": "d2d", "device_allocator": "device"}) == {
        "path": "d2d", "device_allocator": "device"}


def test_compare_matches_an_old_run_with_its_renamed_copy(tmp_path: Path) -> None:
    lines = (OLD_RUN / "results.jsonl").read_text().splitlines()
    renamed = 0
    with (tmp_path / "results.jsonl").open("w") as out:
        for line in lines:
            record = json.loads(line)
            if record.get("type") in ("result", "skip", "error"):
                today = as_written_today(record)
                renamed += today["params"] != record.get("params")
                record = today
            out.write(json.dumps(record) + "\n")
    assert renamed > 250  # copies, STREAM kernels, chases and prefetches (275 records)
    old, new = load_run(OLD_RUN), load_run(tmp_path)
    result = compare_two(old, new)
    assert (result.only_base, result.only_other) == (0, 0)
    assert len(result.points) == len({(r.benchmark, r.params_key, r.ranks, r.bytes) for r in old.results
                                      if r.verified_ok})
    assert not result.settings  # nothing told apart as a run setting: the names are the same
    assert all(p.ratio == 1 for p in result.points)
