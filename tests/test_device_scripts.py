"""The device scripts run only on the GPU machines, where a mistake costs device time that a
session cannot get back. What can be checked without a GPU is checked here."""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((REPO / "scripts" / "device").glob("*.sh"))

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


HELPER = REPO / "scripts" / "device" / "work_folder.sh"
CENSUS = REPO / "scripts" / "device" / "thread_census.py"


def _run_with_work_folder(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.sh"
    script.write_text(f"set -uo pipefail\nOUT={tmp_path / 'out'}\nsource {HELPER} probe_case\n{body}\n")
    (tmp_path / "out").mkdir()
    # A session of its own: a script that signalled its process group must not take pytest with it.
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, start_new_session=True, timeout=20)


def _packed(tmp_path: Path) -> list[str]:
    pack = tmp_path / "out" / "probe-case.tar.gz"
    assert pack.exists(), "the work folder was not packed into $OUT"
    return subprocess.run(["tar", "tzf", str(pack)], capture_output=True, text=True, check=True).stdout.split()


def test_work_folder_packs_and_keeps_the_exit_status_without_a_sampler(tmp_path: Path) -> None:
    done = _run_with_work_folder(tmp_path, 'mkdir "$W/case" && echo record > "$W/case/results.jsonl" '
                                           '&& echo html > "$W/case/report.html"\nexit 3')
    assert done.returncode == 3, done.stderr
    files = _packed(tmp_path)
    assert "./probe_case.log" in files and "./case/results.jsonl" in files
    assert "./case/report.html" not in files  # `commatlas report` rebuilds it


def test_work_folder_stops_its_samplers_and_only_them(tmp_path: Path) -> None:
    # Twenty short scripts: a signal sent while the sampler's child is still becoming `sleep` was
    # lost in about one script in six before stop_background sent it again.
    bystander = subprocess.Popen(["sleep", "60"])
    samplers = []
    try:
        for n in range(20):
            folder = tmp_path / str(n)
            folder.mkdir()
            done = _run_with_work_folder(folder, f'in_background sleep 60\necho "$!" > {folder}/sampler.pid')
            assert done.returncode == 0, done.stderr
            assert "./probe_case.log" in _packed(folder)
            samplers.append(int((folder / "sampler.pid").read_text()))
        left = [pid for pid in samplers if subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode == 0]
        assert not left, f"{len(left)} of 20 samplers started with in_background still run after their script"
        assert bystander.poll() is None, "a process the script did not start was signalled"
    finally:
        bystander.kill()
        bystander.wait()
        for pid in samplers:
            subprocess.run(["kill", "-KILL", str(pid)], capture_output=True)


@pytest.mark.parametrize("folder", ["threads-vm-r", "knobs-vm-s"])
def test_thread_census_summarizes_a_real_device_call_as_it_did_there(folder: str) -> None:
    """order_bisect.sh THREADS=1 on 2x H100 (session 21): the summary, made again from the committed
    samples and records, reads as the one the device printed."""
    work = REPO / "results" / "nvidia-h100-x2" / "figures-that-hold-13" / folder
    targets = "nccl.allgather,nccl.allreduce,nccl.bibw,nccl.reduce,nccl.reduce_scatter"
    done = subprocess.run(["python3", str(CENSUS), "summarize", str(work), targets], capture_output=True, text=True,
                          check=True)
    expected = (work / "threads-summary.txt").read_text()
    assert done.stdout == expected
    assert expected.count("rank 0") >= 6  # one line per rank and job: the test reads real jobs


def test_thread_census_refuses_other_arguments() -> None:
    done = subprocess.run(["python3", str(CENSUS), "count"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("usage:")
