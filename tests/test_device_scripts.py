"""The device scripts run only on the GPU machines, where a mistake costs device time that a
session cannot get back. What can be checked without a GPU is checked here."""
import re
import subprocess
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parent.parent / "scripts" / "device").glob("*.sh"))

# `kill 0` signals every process of the caller's group, the script itself included: a sampler's pid
# variable that falls back to 0 when the sampler never started (`kill "${SMI:-0}"`) ended a finished
# order_bisect.sh run before it packed its records into $OUT.
KILL_ZERO = re.compile(r"""\bkill\b[^#\n]*(\$\{\w+:-0\}|\s["']?0["']?(\s|$))""")


def test_there_are_device_scripts() -> None:
    assert len(SCRIPTS) > 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_device_script_parses(script: Path) -> None:
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_device_script_never_kills_its_own_group(script: Path) -> None:
    bad = [f"{script.name}:{n}: {line.strip()}" for n, line in enumerate(script.read_text().splitlines(), 1)
           if KILL_ZERO.search(line)]
    assert not bad, "kill can reach pid 0 (the script's whole process group): " + "; ".join(bad)


@pytest.mark.parametrize("line", [
    """trap 'kill "${SMI:-0}" 2>/dev/null; tar czf x' EXIT""",
    """kill "$SMI" "${CENSUS:-0}" 2>/dev/null""",
    "kill 0",
    "kill -TERM 0 2>/dev/null",
])
def test_the_kill_check_sees_pid_zero(line: str) -> None:
    assert KILL_ZERO.search(line)


@pytest.mark.parametrize("line", [
    """trap 'kill ${SMI:+"$SMI"} ${CENSUS:+"$CENSUS"} 2>/dev/null; tar' EXIT""",
    """kill -9 "$victim\"""",
    "kill $SMI",
    """echo "killing engine pid $victim at 0" """,
])
def test_the_kill_check_leaves_real_pids_alone(line: str) -> None:
    assert not KILL_ZERO.search(line)
