"""The record's `wire` object (the GPUs' link counters beside the bytes a point claims) is what the
schema says it is. The fixtures are engine output: the runner's records of a peer copy whose fake
link counters saw the bytes (a result) and saw nothing (an error "wire check failed"), written by
engine/tests/wire_test.cpp's WireRunner cases with COMMATLAS_WIRE_FIXTURES set."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "wire"


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def problems(validator, record: dict) -> list[str]:
    return [e.message for e in validator.iter_errors(record)]


@pytest.mark.parametrize("name", ["result_wire_ok.json", "error_wire_failed.json"])
def test_engine_records_with_wire_validate(validator, name: str) -> None:
    assert problems(validator, fixture(name)) == []


def test_failed_wire_check_is_an_error_record_without_a_figure() -> None:
    record = fixture("error_wire_failed.json")
    assert record["type"] == "error"
    assert record["message"].startswith("wire check failed: NVLink counted 0 B (0%) of 256 MiB claimed")
    assert record["wire"]["verdict"] == "failed"
    assert "bandwidth_gbps" not in record


def test_ok_wire_check_puts_counts_beside_the_claim() -> None:
    wire = fixture("result_wire_ok.json")["wire"]
    assert wire["verdict"] == "ok"
    assert wire["link"] == "nvlink"
    assert wire["observed_bytes"] >= wire["claimed_bytes"] / 2
    assert [g["gpu"] for g in wire["gpus"]] == [0, 1]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda w: w.update(verdict="maybe"),
        lambda w: w.pop("detail"),
        lambda w: w.update(link="infiniband"),
        lambda w: w["gpus"][0].update(nvlink={}),  # neither counts nor why
        lambda w: w["gpus"][0]["pcie"].update(tx_bytes=-1),
    ],
)
def test_schema_rejects_a_spoiled_wire(validator, spoil) -> None:
    record = copy.deepcopy(fixture("result_wire_ok.json"))
    spoil(record["wire"])
    assert problems(validator, record)
