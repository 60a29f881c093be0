"""The fixtures cut from results/ are what their cut makes of the committed runs: real engine
records, line for line, each folder's README saying where from and how (tests/fixtures/cut_results.py).
This test reads results/ on purpose: it is the check that no fixture was edited or invented."""
from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, fixture_run

spec = importlib.util.spec_from_file_location("cut_results", FIXTURES / "cut_results.py")
cut_results = importlib.util.module_from_spec(spec)
sys.modules["cut_results"] = cut_results  # its dataclasses look their module up there
spec.loader.exec_module(cut_results)


def sources(fixture) -> list:
    return [cut_results.source_path(fixture, cut) for cut in fixture.cuts]


@pytest.mark.parametrize("name", sorted(cut_results.BY_NAME))
def test_each_fixture_is_its_cut_of_the_committed_run(name: str) -> None:
    fixture = cut_results.BY_NAME[name]
    missing = [str(p.relative_to(REPO)) for p in sources(fixture) if not p.is_file()]
    if missing:
        pytest.skip(f"the committed run is not in this checkout: {', '.join(missing)}")
    assert cut_results.problems(fixture) == []


def test_a_changed_record_or_a_stray_file_is_found(tmp_path, monkeypatch) -> None:
    """The check compares every unpacked line: one changed figure in a gzipped cut, or a file no cut
    makes, fails it."""
    fixture = cut_results.BY_NAME["h200x2-memcpy-one-thread"]
    copy = tmp_path / fixture.name
    shutil.copytree(FIXTURES / fixture.name, copy)
    monkeypatch.setattr(cut_results, "HERE", tmp_path)
    assert cut_results.problems(fixture) == []
    stored = copy / "results.jsonl.gz"
    lines = gzip.decompress(stored.read_bytes()).decode().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["bandwidth_gbps"] *= 1.01
    lines[1] = json.dumps(record) + "\n"
    stored.write_bytes(gzip.compress("".join(lines).encode()))
    (copy / "notes.txt").write_text("a file no cut makes\n")
    assert cut_results.problems(fixture) == [f"{fixture.name}/notes.txt: not a file of its cut",
                                             f"{fixture.name}/results.jsonl.gz: differs from its cut"]


def test_large_cuts_are_gzipped_and_unpacked_for_the_reader() -> None:
    for name in cut_results.BY_NAME:
        plain = [p for p in (FIXTURES / name).rglob("*") if p.is_file() and p.suffix != ".gz"]
        assert all(p.stat().st_size <= cut_results.GZIP_OVER for p in plain), name
    run = fixture_run("h100-atlas-default")
    assert run != FIXTURES / "h100-atlas-default" and (run / "default" / "results.jsonl").is_file()
    assert not list(run.rglob("*.gz"))
    assert fixture_run("h200x2-nccl-overhead") == FIXTURES / "h200x2-nccl-overhead"  # nothing to unpack


def test_the_script_says_an_unknown_name_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(FIXTURES / "cut_results.py"), "--check", "nothing-of-that-name"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no fixture named nothing-of-that-name" in done.stderr
