"""Writing files for the user: every failure (a missing folder, a directory where a file should
be, a read-only place, a full disk) is one line and exit status 2, naming the path and why."""

from __future__ import annotations

import os
from pathlib import Path

from commatlas.errors import UsageError


def write_failure(path: Path, e: OSError, what: str = "write") -> UsageError:
    reason = e.strerror or str(e)
    return UsageError(f"cannot {what} {path}: {reason}")


def check_file_target(path: Path) -> None:
    """Refuses before any work is done a file path that cannot be written: its folder missing or
    not a folder, the path a directory, or no permission."""
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory (name a file)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise UsageError(f"cannot write {path}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: {parent} is not a folder")
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise UsageError(f"cannot write {path}: permission denied" + ("" if path.exists() else f" in {parent}"))


def check_dir_target(path: Path) -> None:
    """A folder to write into: it may not exist yet (it is made), but may not be a file."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"cannot write into {path}: it is a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot write into {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write into {path}: permission denied in {existing}")


def write_text(path: Path, text: str) -> None:
    check_file_target(path)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise write_failure(path, e) from None
