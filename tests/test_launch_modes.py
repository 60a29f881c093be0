"""Launch modes in the map and the findings: where one operation was measured in several launch modes
(the records' `launch_mode` choice), the map keeps the mode a user of the mechanism would use, says
so under the map, and the findings say what a launch costs.

The records of the 2x H100 device run (scripts/device/gpu_initiated.sh, committed under
tests/fixtures/gpu_initiated/) hold every mode of the GPU-initiated mechanism, the copies and NCCL;
a run without launch modes (the committed 2x H200 run, tests/fixtures/h200x2-atlas-2gpu) must read
exactly as before."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from commatlas.analysis.answers import USER_LAUNCH_MODES, collect, compute_answers, user_launch_mode
from commatlas.analysis.findings import launch_note, mechanism_name
from commatlas.io.results import load_run, run_from_records
from commatlas.report.summary import print_summary
from conftest import fixture_run

ROOT = Path(__file__).resolve().parent.parent
OLD_RUN = fixture_run("h200x2-atlas-2gpu") / "default"
DEVICE_RUN = fixture_run("gpu_initiated")  # stored gzipped, as fixtures over 100 KB are
SCHEMA = ROOT / "schema" / "answers.schema.json"

needs_device_run = pytest.mark.skipif(
    not (DEVICE_RUN / "results.jsonl").exists(),
    reason="no records of scripts/device/gpu_initiated.sh under tests/fixtures/gpu_initiated/ yet (a GPU run)")


def test_a_run_without_launch_modes_keeps_its_map() -> None:
    run = load_run(OLD_RUN)
    answers = compute_answers(run)
    assert "launch_modes" not in answers
    assert "other_launch_mode" not in answers["left_out"]
    assert launch_note(answers) is None
    data, _ = collect(run)
    assert sum(len(points) for d in data for points in d.contenders.values()) > 0


def test_each_mechanism_has_one_user_launch_mode() -> None:
    assert user_launch_mode("gpu_initiated") == "persistent"
    assert user_launch_mode("nccl") == "back_to_back"
    assert user_launch_mode("copy_engine") == user_launch_mode("sm_copy") == "launch_included"
    assert set(USER_LAUNCH_MODES.values()) <= {"persistent", "back_to_back", "graph", "launch_included"}
    assert mechanism_name("gpu_initiated") != "gpu initiated"  # a display name, not the record name


@pytest.fixture(scope="module")
def device_run():
    return load_run(DEVICE_RUN)


@needs_device_run
def test_the_map_holds_only_the_user_launch_mode(device_run) -> None:
    data, left_out = collect(device_run)
    assert left_out.get("other_launch_mode", 0) > 0
    for d in data:
        for contender in d.contenders:
            mode = dict(contender.choices).get("launch_mode")
            assert mode is None or mode == user_launch_mode(contender.mechanism), (d.label, contender)


@needs_device_run
def test_the_gpu_initiated_mechanism_enters_the_latency_row(device_run) -> None:
    answers = compute_answers(device_run)
    rows = [mv for mv in answers["movements"] if mv["metric"] == "latency" and "gpu_initiated" in mv["mechanisms"]]
    assert rows, [mv["label"] for mv in answers["movements"]]
    assert any(mv["label"].startswith("GPU 0 → GPU 1") for mv in rows), [mv["label"] for mv in rows]


@needs_device_run
def test_every_mode_side_by_side_and_what_a_launch_costs(device_run) -> None:
    answers = compute_answers(device_run)
    modes = answers["launch_modes"]
    by_mechanism = {}
    for g in modes:
        by_mechanism.setdefault(g["mechanism"], set()).update(g["us"])
    assert by_mechanism["gpu_initiated"] == {"persistent", "back_to_back", "graph", "launch_included"}
    assert {"launch_included", "back_to_back", "graph"} <= by_mechanism["copy_engine"]
    assert {"launch_included", "back_to_back", "graph"} <= by_mechanism["nccl"]
    costs = [f for f in answers["findings"] if f["kind"] == "launch_cost"]
    assert costs and all("launch included" in f["text"] for f in costs), costs
    assert all(f["movement"] in {mv["key"] for mv in answers["movements"]} for f in costs)
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    jsonschema.validate(answers, json.loads(SCHEMA.read_text()))


@needs_device_run
def test_the_summary_says_which_launch_the_map_shows(device_run) -> None:
    records = [json.loads(line) for line in (DEVICE_RUN / "results.jsonl").read_text().splitlines() if line.strip()]
    out = io.StringIO()
    print_summary(Console(file=out, width=80, force_terminal=False), records)
    text = " ".join(out.getvalue().split())
    assert "the map shows the launch a user would use" in text
    assert f"{mechanism_name('gpu_initiated')}: persistent kernel" in text
    assert run_from_records(records).results
