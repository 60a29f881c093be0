"""NCCL's device API in the map: every one of its variants runs in persistent kernels (the records'
`launch_mode` choice says so), which is the launch a user of it makes, so the map keeps its points
beside the repository's own GPU-initiated stores rather than leaving them out as another mode.

The records of a 2x H200 device run (scripts/device/nccl_device.sh, its fixture/ copied under
tests/fixtures/nccl_device/) show the rest: the mechanism enters the GPU 0 -> GPU 1 latency row,
every point is verified, each record names the primitive that signalled it, and the only skips are
the sizes NCCL's LL protocol does not carry."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from commatlas.analysis.answers import collect, compute_answers, user_launch_mode
from commatlas.analysis.findings import mechanism_name
from commatlas.io.results import load_run

ROOT = Path(__file__).resolve().parent.parent
DEVICE_RUN = ROOT / "tests" / "fixtures" / "nccl_device"

needs_device_run = pytest.mark.skipif(
    not (DEVICE_RUN / "results.jsonl").exists(),
    reason="no records of scripts/device/nccl_device.sh under tests/fixtures/nccl_device/ yet (a GPU run)")


def test_the_map_shows_the_persistent_kernels_of_nccls_device_api() -> None:
    assert user_launch_mode("nccl_device") == "persistent"
    assert user_launch_mode("nccl_device") == user_launch_mode("gpu_initiated")
    assert mechanism_name("nccl_device") == "NCCL device API"  # the vocabulary's display name


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (DEVICE_RUN / "results.jsonl").read_text().splitlines() if line.strip()]


@needs_device_run
def test_nccl_device_enters_the_gpu_to_gpu_latency_row() -> None:
    run = load_run(DEVICE_RUN)
    data, _ = collect(run)
    assert any(c.mechanism == "nccl_device" for d in data for c in d.contenders)
    answers = compute_answers(run)
    rows = [mv for mv in answers["movements"] if mv["metric"] == "latency" and "nccl_device" in mv["mechanisms"]]
    assert any(mv["label"].startswith("GPU 0 → GPU 1") for mv in rows), [mv["label"] for mv in answers["movements"]]


@needs_device_run
def test_every_point_is_verified_and_names_its_primitive(records) -> None:
    mine = [r for r in records if r.get("benchmark", "").startswith("nccl_device.")]
    results = [r for r in mine if r["type"] == "result"]
    assert results, "the device run measured no nccl_device point"
    for r in results:
        assert r["verified"]["ok"], (r["benchmark"], r["bytes"])
        assert r["movement"]["mechanism"] == "nccl_device"
        assert r["movement"]["to"]["allocator"] == "nccl_mem"
        signal = r["params"]["signal"]
        words = r.get("latency_includes", "") + r["timing"]["method"]
        assert ("protocol LL" if signal == "ll" else "LSA barrier") in words, (signal, words)
    assert not [r for r in mine if r["type"] == "error"], [r["message"] for r in mine if r["type"] == "error"]
    for r in (r for r in mine if r["type"] == "skip"):
        assert r.get("params", {}).get("signal") == "ll" and (r.get("bytes") or 0) > 4096, r
