"""scripts/maps_same.py, the check that two versions of the package draw the same map of the same
runs: one package against itself says identical; a copy whose ranking crowns the slowest contender
is caught, in the map and in the terminal lines; and bad arguments get one line and exit status 2.
Read from a real run (tests/fixtures/mpi-libraries)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, REPO

SCRIPT = REPO / "scripts" / "maps_same.py"
PACKAGE = REPO / "python"
RUN = FIXTURES / "mpi-libraries"


def maps_same(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_a_package_draws_the_same_map_as_itself() -> None:
    out = maps_same(PACKAGE, PACKAGE, RUN)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"identical  {RUN.relative_to(REPO)}",
                                       "1 of 1 runs: the same map; 0 differ"]


def test_a_package_that_crowns_the_slowest_is_caught(tmp_path: Path) -> None:
    broken = tmp_path / "python"
    shutil.copytree(PACKAGE / "commatlas", broken / "commatlas", ignore=shutil.ignore_patterns("__pycache__"))
    ranking = broken / "commatlas" / "analysis" / "ranking.py"
    text = ranking.read_text()
    sort = 'here.sort(key=lambda cr: value_of(cr[1]), reverse=metric == "bandwidth")'
    assert sort in text  # the rule the planted fault inverts
    ranking.write_text(text.replace(sort, sort.replace('metric == "bandwidth"', 'metric != "bandwidth"')))
    out = maps_same(PACKAGE, broken, RUN, "--verbose")
    assert out.returncode == 1, out.stdout + out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith(f"differs    {RUN.relative_to(REPO)}: map, views, terminal"), first
    assert any(line.startswith("    map/rows[") for line in out.stdout.splitlines())
    assert out.stdout.splitlines()[-1] == "0 of 1 runs: the same map; 1 differ"


def test_bad_arguments_get_one_line(tmp_path: Path) -> None:
    out = maps_same(tmp_path, PACKAGE, RUN)
    assert out.returncode == 2
    assert out.stderr.strip() == f"maps_same: {tmp_path}: holds no commatlas package"
    out = maps_same(PACKAGE, PACKAGE, tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"maps_same: {tmp_path}: holds no results.jsonl or results.jsonl.gz"
