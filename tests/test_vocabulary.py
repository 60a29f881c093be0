"""The engine is the one source of the movement model's names: the schema's enums, the tables in
docs/results-format.md and the Python package's copy (python/commatlas/io/vocabulary.json, which the
report's mechanism names and colours come from) must say exactly what
`commatlas-engine vocabulary --json` prints."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "schema" / "results.schema.json"
DOCS = REPO / "docs" / "results-format.md"
VOCABULARIES = ("operation", "operation_kind", "direction", "mechanism", "memory", "allocator", "param")
RECORDED = ("operation", "direction", "mechanism", "memory")  # record fields, so schema enums
PACKAGE_COPY = REPO / "python" / "commatlas" / "io" / "vocabulary.json"


@pytest.fixture(scope="module")
def vocabulary(engine_path: Path) -> dict[str, list[dict[str, str]]]:
    out = subprocess.run([str(engine_path), "vocabulary", "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def schema_enums() -> dict[str, list[str]]:
    defs: dict[str, Any] = json.loads(SCHEMA.read_text())["$defs"]
    movement = defs["movement"]["properties"]
    return {
        "operation": movement["operation"]["enum"],
        "direction": movement["direction"]["enum"],
        "mechanism": movement["mechanism"]["enum"],
        "memory": defs["endpoint"]["properties"]["memory"]["enum"],
    }


def docs_tables() -> dict[str, list[tuple[str, str]]]:
    """Rows of the `| <vocabulary> | meaning |` tables in the docs, in order."""
    tables: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    for line in DOCS.read_text().splitlines():
        header = re.fullmatch(r"\| (\w+) \| meaning \|", line)
        if header and header.group(1) in VOCABULARIES:
            current = header.group(1)
            tables[current] = []
            continue
        if current is None or line.startswith("| ---"):
            continue
        row = re.fullmatch(r"\| `([^`]+)` \| (.*) \|", line)
        if row:
            tables[current].append((row.group(1), row.group(2)))
        else:
            current = None
    return tables


def test_engine_prints_every_vocabulary_with_meanings(vocabulary) -> None:
    assert set(vocabulary) == set(VOCABULARIES)
    for name in VOCABULARIES:
        names = [e["name"] for e in vocabulary[name]]
        assert names and len(names) == len(set(names)), name
        assert all(e["meaning"] for e in vocabulary[name]), name
    assert "half_round_trip" in [e["name"] for e in vocabulary["direction"]]


def test_schema_enums_are_the_engines(vocabulary) -> None:
    enums = schema_enums()
    for name in RECORDED:
        assert enums[name] == [e["name"] for e in vocabulary[name]], name


def test_docs_tables_are_the_engines(vocabulary) -> None:
    tables = docs_tables()
    for name in VOCABULARIES:
        assert tables.get(name) == [(e["name"], e["meaning"]) for e in vocabulary[name]], name


def test_package_copy_is_the_engines(vocabulary) -> None:
    """Regenerate with `commatlas-engine vocabulary --json > python/commatlas/io/vocabulary.json`."""
    assert json.loads(PACKAGE_COPY.read_text()) == vocabulary


def test_operations_and_mechanisms_carry_their_attributes(vocabulary) -> None:
    kinds = {k["name"]: k["participants"] for k in vocabulary["operation_kind"]}
    directions = {d["name"] for d in vocabulary["direction"]}
    for op in vocabulary["operation"]:
        assert kinds[op["kind"]] == op["participants"], op["name"]
        assert op["directions"] and set(op["directions"]) <= directions, op["name"]
    interfaces = json.loads(SCHEMA.read_text())["$defs"]["result"]["properties"]["interface"]["enum"]
    for m in vocabulary["mechanism"]:
        assert m["display"] and re.fullmatch(r"#[0-9a-f]{6}", m["colour"]), m["name"]
        assert m["interface"] in interfaces, m["name"]
    assert len({m["colour"] for m in vocabulary["mechanism"]}) == len(vocabulary["mechanism"])


def test_recorded_host_fixture_carries_a_valid_movement_everywhere(validator) -> None:
    """The report's host fixture is engine output: every engine record declares its movement."""
    path = REPO / "tests" / "fixtures" / "report" / "host" / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    engine_records = [r for r in records if r["type"] in ("result", "skip", "error")]
    assert engine_records
    for r in engine_records:
        assert not list(validator.iter_errors(r)), r["point"]
        assert r["movement"]["from"] is not None
        peak = r.get("peak")
        if peak is not None and peak["gbps"] is None:
            assert "fraction" not in peak and peak["unknown"]
