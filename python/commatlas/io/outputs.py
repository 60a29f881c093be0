"""Writing files for the user: every failure (a missing folder, a directory where a file should
be, a read-only place, a full disk) is one line and exit status 2, naming the path and why.
Every file is written whole or not at all: into a temporary file beside it, then renamed over
it, so a full disk leaves the previous file (or none), never half a report."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # what open() would have given a new file


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to `path` whole or not at all (OSError otherwise, with no file left
    behind). A path that is not a regular file (/dev/stdout, a pipe) is written as it is:
    renaming over it would replace the device."""
    path = Path(path)
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as f:
            f.write(text)
        return
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # a full disk may only say so here
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else _FILE_MODE
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(e, OSError):  # named after the file asked for, not the temporary one
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        raise


def write_text(path: Path, text: str) -> None:
    check_file_target(path)
    try:
        write_atomically(path, text)
    except OSError as e:
        raise write_failure(path, e) from None
