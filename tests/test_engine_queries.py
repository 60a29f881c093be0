"""Before a run, the engine is asked info, topo and list side by side: on a GPU machine each
query starts the driver, and one after another they cost that start three times. The fake engine
here answers only once all three have started (it gives up otherwise), so asking one at a time
fails; an error is still the one the first failing query would raise asked alone."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from commatlas.errors import UsageError
from commatlas.io.engine import Engine
from conftest import fixture_json

QUERIES = ("info", "topo", "list")


def rendezvous_engine(directory: Path, fail: tuple[str, ...] = (), topo: bool = True) -> Engine:
    """Each query marks that it started, waits (at most 30 s) for the other two, then answers
    from the fixtures, or fails with its own message when named in `fail`."""
    marks = directory / "started"
    marks.mkdir()
    answers = directory / "answers.json"
    answers.write_text(json.dumps({"info": fixture_json("info_with_mpi.json"), "list": fixture_json("list_with_mpi.json"),
                                   "topo": fixture_json("topo_4xh200.json")}))
    script = directory / "fake-engine"
    script.write_text(f"""#!{sys.executable}
import json, sys, time
from pathlib import Path
command, marks = sys.argv[1], Path({str(marks)!r})
(marks / command).touch()
deadline = time.monotonic() + 30
while not all((marks / q).exists() for q in {QUERIES!r}):
    if time.monotonic() > deadline:
        print(f"commatlas-engine: error: {{command}} was asked alone", file=sys.stderr)
        sys.exit(2)
    time.sleep(0.01)
if command == "topo" and not {topo!r}:
    print("commatlas-engine: error: unknown command 'topo' (use list, info or run)", file=sys.stderr)
    sys.exit(2)
if command in {fail!r}:
    print(f"commatlas-engine: error: {{command}} refused", file=sys.stderr)
    sys.exit(2)
print(json.dumps(json.load(open({str(answers)!r}))[command]))
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Engine(script)


def test_the_three_queries_run_side_by_side(tmp_path: Path) -> None:
    info, topology, benchmarks = rendezvous_engine(tmp_path).info_topology_benchmarks(["--quick"])
    assert info == fixture_json("info_with_mpi.json")
    assert len(topology["gpus"]) == 4
    assert benchmarks == fixture_json("list_with_mpi.json")


def test_an_engine_without_topo_has_no_topology(tmp_path: Path) -> None:
    _, topology, _ = rendezvous_engine(tmp_path, topo=False).info_topology_benchmarks()
    assert topology is None


@pytest.mark.parametrize("fail, said", [(("info", "list"), "info refused"), (("topo", "list"), "topo refused"),
                                        (("list",), "list refused")])
def test_the_first_failure_in_asking_order_is_said(tmp_path: Path, fail, said) -> None:
    with pytest.raises(UsageError, match=said):
        rendezvous_engine(tmp_path, fail).info_topology_benchmarks()
