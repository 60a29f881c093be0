"""NVSHMEM in the map: every one of its variants runs in persistent kernels (the records'
`launch_mode` choice says so), which is the launch a user of it makes, so the map keeps its points
beside the repository's own GPU-initiated stores and NCCL's device API rather than leaving them out
as another mode.

The records of a 2-GPU device run (scripts/device/nvshmem.sh, its fixture/ copied under
tests/fixtures/nvshmem/) show the rest: the mechanism enters the GPU 0 -> GPU 1 latency row, every
point is verified, each record names the NVSHMEM call that moved it, the peer's inbox is in the
symmetric heap, and the only skips are the sizes one thread's put does not carry."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from commatlas.analysis.answers import collect, compute_answers, user_launch_mode
from commatlas.analysis.findings import mechanism_name
from commatlas.io.results import load_run

ROOT = Path(__file__).resolve().parent.parent
DEVICE_RUN = ROOT / "tests" / "fixtures" / "nvshmem"

needs_device_run = pytest.mark.skipif(
    not (DEVICE_RUN / "results.jsonl").exists(),
    reason="no records of scripts/device/nvshmem.sh under tests/fixtures/nvshmem/ yet (a GPU run)")


def test_the_map_shows_the_persistent_kernels_of_nvshmem() -> None:
    assert user_launch_mode("nvshmem") == "persistent"
    assert user_launch_mode("nvshmem") == user_launch_mode("gpu_initiated")
    assert mechanism_name("nvshmem") == "NVSHMEM"  # the vocabulary's display name


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (DEVICE_RUN / "results.jsonl").read_text().splitlines() if line.strip()]


@needs_device_run
def test_nvshmem_enters_the_gpu_to_gpu_latency_row() -> None:
    run = load_run(DEVICE_RUN)
    data, _ = collect(run)
    assert any(c.mechanism == "nvshmem" for d in data for c in d.contenders)
    answers = compute_answers(run)
    rows = [mv for mv in answers["movements"] if mv["metric"] == "latency" and "nvshmem" in mv["mechanisms"]]
    assert any(mv["label"].startswith("GPU 0 → GPU 1") for mv in rows), [mv["label"] for mv in answers["movements"]]


@needs_device_run
def test_every_point_is_verified_and_names_its_call(records) -> None:
    mine = [r for r in records if r.get("benchmark", "").startswith("nvshmem.")]
    results = [r for r in mine if r["type"] == "result"]
    assert results, "the device run measured no nvshmem point"
    for r in results:
        assert r["verified"]["ok"], (r["benchmark"], r["bytes"])
        assert r["movement"]["mechanism"] == "nvshmem"
        assert r["movement"]["to"]["allocator"] == "nvshmem_malloc"
        put = r["params"]["put"]
        words = r.get("latency_includes", "") + r["timing"]["method"]
        assert ("nvshmem_putmem_signal_nbi " if put == "thread" else "nvshmemx_putmem_signal_nbi_block") in words, \
            (put, words)
    assert not [r for r in mine if r["type"] == "error"], [r["message"] for r in mine if r["type"] == "error"]
    for r in (r for r in mine if r["type"] == "skip"):
        assert r.get("params", {}).get("put") == "thread" and (r.get("bytes") or 0) > 65536, r
