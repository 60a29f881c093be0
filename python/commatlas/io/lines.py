"""Lines that programs print: the engine's progress events, the OSU-method program's and the
torch worker's measurements arrive as JSON objects, one a line, among whatever else a launcher,
MPI or NCCL prints on the same stream."""

from __future__ import annotations

import json
from typing import Any


def json_object(line: str) -> dict[str, Any] | None:
    """The JSON object a line holds, or None for any other line (launcher noise, a library's words,
    a line cut short)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
