"""The movement model's names as the engine declares them (`commatlas-engine vocabulary --json`):
operations with their kind, participants and directions, mechanisms with the name and colour the
report shows, and the places (memories and allocators). `vocabulary.json` beside this module is that output,
shipped with the package so that results read on a machine without the engine name things alike;
tests/test_vocabulary.py fails when it differs from what the engine prints."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VOCABULARY_FILE = Path(__file__).with_name("vocabulary.json")
VOCABULARY: dict[str, list[dict[str, Any]]] = json.loads(VOCABULARY_FILE.read_text())

# A mechanism's name in the report ("copy engine", "GPU-aware MPI") and its fixed colour.
MECHANISM_NAMES: dict[str, str] = {m["name"]: m["display"] for m in VOCABULARY["mechanism"]}
MECHANISM_COLOURS: dict[str, str] = {m["name"]: m["colour"] for m in VOCABULARY["mechanism"]}
# Operations over a communicator (collectives and patterns): every member takes part.
COMMUNICATOR_OPERATIONS: tuple[str, ...] = tuple(
    o["name"] for o in VOCABULARY["operation"] if o["participants"] == "all")
