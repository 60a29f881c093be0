"""`commatlas run` keeps the GPU driver started while it starts its engine processes one after
another (Engine.driver_held, the engine's `hold` command): on 2x H100 the first process to start
CUDA paid about 0.45 s, and the next one paid it again once the last had gone."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import commatlas.io.engine as engine_module
from commatlas.io.engine import Engine
from conftest import fixture_json, run_cli, write_fake_engine


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child of this test that ended but was not reaped is a zombie: gone all the same.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_engine_holds_until_its_input_closes(engine_path: Path) -> None:
    holder = subprocess.Popen([str(engine_path), "hold"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "holding\n"
        time.sleep(0.2)
        assert holder.poll() is None  # still there: it waits for its input to close
        holder.stdin.close()
        assert holder.wait(timeout=10) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def holding_engine(directory: Path, hold: str) -> Path:
    """The host-only fake engine of conftest, with a `hold` command whose body is `hold` (Python,
    `held` the path it marks with its pid), and a `run` that waits up to 5 s for that mark and
    writes what it found to run.log."""
    script = write_fake_engine(directory, fixture_json("info_host_only.json"), fixture_json("list_host_only.json"), None)
    held, log = directory / "held", directory / "run.log"
    text = script.read_text()
    prologue = (f"import os, time\nheld, log = {str(held)!r}, {str(log)!r}\n"
                "if command == 'hold':\n    open(held, 'w').write(str(os.getpid()))\n"
                + "".join(f"    {line}\n" for line in hold.splitlines())
                + "if command == 'run':\n    deadline = time.monotonic() + 5\n"
                  "    while not os.path.exists(held) and time.monotonic() < deadline:\n        time.sleep(0.01)\n"
                  "    open(log, 'a').write('held by ' + open(held).read() if os.path.exists(held) else 'not held')\n")
    marker = "command = sys.argv[1] if len(sys.argv) > 1 else \"\"\n"
    assert marker in text
    script.write_text(text.replace(marker, marker + prologue, 1))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_run_holds_the_driver_while_its_engine_runs_and_lets_it_go(tmp_path: Path) -> None:
    engine = holding_engine(tmp_path, "sys.stdin.read()\nos.remove(held)\nsys.exit(0)")
    done = run_cli("run", "--out", str(tmp_path / "r"), env={"COMMATLAS_ENGINE": str(engine)})
    assert done.returncode == 0, done.stderr
    said = (tmp_path / "run.log").read_text()
    assert said.startswith("held by "), said
    # The holder saw its input close and ended on its own before the command returned.
    assert not (tmp_path / "held").exists()
    assert not alive(int(said.split()[-1]))


def test_a_holder_that_does_not_let_go_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "HOLD_EXIT_TIMEOUT_S", 0.3)
    engine = Engine(holding_engine(tmp_path, "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)"))
    started = time.monotonic()
    with engine.driver_held():
        deadline = time.monotonic() + 5
        while not (tmp_path / "held").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        pid = int((tmp_path / "held").read_text())
        assert alive(pid)
    assert not alive(pid)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("path", ["missing", "refuses"])
def test_an_engine_that_cannot_hold_changes_nothing(tmp_path: Path, path: str) -> None:
    """An engine without the command (exit 1), or none at all: the block runs, nothing is raised."""
    script = tmp_path / "no-such-engine"
    if path == "refuses":
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(1)\n")
        script.chmod(0o755)
    ran = []
    with Engine(script).driver_held():
        ran.append(True)
    assert ran == [True]
