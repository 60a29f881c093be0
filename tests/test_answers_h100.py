"""Issue 10's "done when", checked on the records a real single-GPU run wrote (one H100, committed
under results/nvidia-h100-x1/atlas-default): the engine declared every movement itself there, so
nothing in this test is a fixture written by hand or labelled by a script."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from commatlas.answers import compute_answers
from commatlas.results import load_run

RUN = Path(__file__).resolve().parent.parent / "results" / "nvidia-h100-x1" / "atlas-default" / "default"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def answers() -> dict:
    return compute_answers(load_run(RUN))


def test_every_record_declares_its_movement(records) -> None:
    points = [r for r in records if r["type"] in ("result", "skip", "error")]
    assert points and all("movement" in r for r in points)


def test_no_fraction_above_one_and_cache_figures_carry_no_peak(records) -> None:
    for r in (r for r in records if r["type"] == "result"):
        peak = r.get("peak") or {}
        assert peak.get("fraction", 0) <= 1.0, r["point"]
        if r["movement"].get("cache_resident") and peak:  # latencies carry no peak at all
            assert peak.get("gbps") is None and peak.get("unknown"), r["point"]


def test_no_winner_is_cache_resident_and_alternatives_share_the_movement(answers, records) -> None:
    by_point = {r["point"]: r for r in records if r["type"] == "result"}
    for m in answers["movements"]:
        for cell in m["cells"]:
            for role in ("winner", "runner_up"):
                pick = cell.get(role)
                if not pick:
                    continue
                record = by_point[pick["point"]]
                assert not record["movement"].get("cache_resident"), (m["label"], cell["bin"], role)
                # Same operation, direction and metric as the row: h2d never competes with d2h,
                # read never with write, a latency never with a bandwidth.
                assert record["movement"]["operation"] == m["operation"], (m["label"], pick["point"])
                assert record["movement"]["direction"] == m["direction"], (m["label"], pick["point"])
                assert record["metric"] == m["metric"], (m["label"], pick["point"])
                assert record["movement"]["from"]["memory"] == m["from"]["memory"], (m["label"], pick["point"])
                assert record["movement"]["to"]["memory"] == m["to"]["memory"], (m["label"], pick["point"])


def test_findings_are_short_sentences_without_parameter_dumps(answers) -> None:
    findings = answers["findings"]
    assert 0 < len(findings) <= 12
    for f in findings:
        text = f["text"]
        assert len(text) <= 200 and text.endswith("."), text
        assert "=" not in text, f"parameter dump in a finding: {text}"
