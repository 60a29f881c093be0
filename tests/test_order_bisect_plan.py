"""scripts/device/order_bisect.sh reads a CASES string of its own syntax; a device call that
misreads it spends GPU minutes on jobs that fail at once (a ^ selection once went to `env` as a
command: exit 127 in every job of three cases). PLAN_ONLY=1 prints what each case would run, here,
without a GPU, and bad words end the script with one line and exit status 2."""

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "device" / "order_bisect.sh"
TARGET = "nccl.allreduce,nccl.bibw"


def plan(cases: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "CASES", "TARGET")}
    env.update(PLAN_ONLY="1", CASES=cases, TARGET=TARGET)
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=30)


def test_every_kind_of_case_word_plans_its_steps():
    done = plan("same=ipc.*,mpi.gpu_aware.* prev=^ipc.*,mpi.gpu_aware.* idle=^idle:20 "
                "first=@COMMATLAS_X=1@Y=two both=^mpi.staged.*@COMMATLAS_X=1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"alone: commatlas run --only {TARGET}",
        f"same: commatlas run --only ipc.*,mpi.gpu_aware.*,{TARGET}",
        "prev: first commatlas run --only ipc.*,mpi.gpu_aware.* (records in prev.pre)",
        f"prev: commatlas run --only {TARGET}",
        "idle: first sleep 20 s",
        f"idle: commatlas run --only {TARGET}",
        f"first: COMMATLAS_X=1 Y=two commatlas run --only {TARGET}",
        "both: first commatlas run --only mpi.staged.* (records in both.pre)",
        f"both: COMMATLAS_X=1 commatlas run --only {TARGET}",
    ]


@pytest.mark.parametrize("word, says", [
    ("after", "needs NAME=SELECTION"),
    ("prev=^", "^ needs a selection"),
    ("idle=^idle:soon", "idle: needs whole seconds"),
    ("x=ipc.*@^mpi.*", "'^mpi.*' after @ is not VAR=VALUE"),
    ("a/b=ipc.*", "it names a folder"),
    ("alone=ipc.*", "the name 'alone' is taken"),
])
def test_a_bad_case_word_is_one_line_and_status_2(word: str, says: str):
    done = plan(word)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0] and f"'{word}'" in lines[0]
