"""scripts/compare_tolerance.py, which measures what compare's rule costs on identical pairs: what made
each changed point changed, and how many single points it catches when one of them is planted
slower (--isolated), at compare's quantile or another (--quantile). Read from a real pair of
identical default runs (tests/fixtures/h200x2-atlas-1gpu)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
from conftest import REPO, fixture_run

SCRIPT = REPO / "scripts" / "compare_tolerance.py"
PAIR = fixture_run("h200x2-atlas-1gpu")


def tolerance(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)


def planted(out: str) -> dict[float, tuple[int, int]]:
    """{factor: (called changed, planted)} from the --isolated lines."""
    found = re.findall(r"planted ([0-9.]+)x slowdown at one point, (\d+) points in turn: (\d+) called changed", out)
    return {float(f): (int(hit), int(n)) for f, n, hit in found}


def test_a_planted_point_is_caught_and_a_point_left_alone_is_not() -> None:
    out = tolerance("--isolated", "1,3", PAIR / "default", PAIR / "default2")
    assert out.returncode == 0, out.stderr
    lines = planted(out.stdout)
    # Nothing planted (a factor of 1): the point stays unchanged, so counting cannot be what finds it.
    assert lines[1.0] == (0, 20), out.stdout
    hit, n = lines[3.0]
    assert n == 20 and hit >= 18, out.stdout
    causes = re.search(r"changed, by cause: (.*)", out.stdout)
    assert causes, out.stdout
    changed = int(re.search(r"'no change' \([0-9.]+%\), (\d+) changed", out.stdout)[1])
    counted = sum(int(n) for n in re.findall(r" (\d+)(?:;|$)", causes[1]))
    assert counted == changed, (causes[1], changed)  # every changed point has one cause


def test_another_quantile_is_the_rule_compare_then_uses() -> None:
    default = tolerance(PAIR / "default", PAIR / "default2")
    lower = tolerance("--quantile", "0.975", PAIR / "default", PAIR / "default2")
    assert default.returncode == lower.returncode == 0, default.stderr + lower.stderr
    assert "the 99.0% quantile" in default.stdout and "the 97.5% quantile" in lower.stdout


def test_bad_arguments_get_one_line_and_status_2(tmp_path) -> None:
    for args in (["--quantile", "2", "a", "b"], ["--isolated", "x", "a", "b"], ["--bogus", "a", "b"],
                 [tmp_path / "none", tmp_path / "none"]):
        out = tolerance(*args)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_several_pairs_end_with_them_pooled() -> None:
    """The pooled line sums the pairs' own counts; one pair alone has none."""
    both = tolerance(PAIR / "default", PAIR / "default2", PAIR / "default2", PAIR / "default")
    one = tolerance(PAIR / "default", PAIR / "default2")
    assert both.returncode == one.returncode == 0, both.stderr + one.stderr
    per = re.findall(r"(\d+) of (\d+) judged points 'no change' \([0-9.]+%\), (\d+) changed", both.stdout)
    pooled = re.search(r"pooled over 2 pairs: (\d+) of (\d+) judged points changed .*; (\d+) pairs below 95%",
                       both.stdout)
    assert len(per) == 2 and pooled, both.stdout
    assert int(pooled[1]) == sum(int(c) for _, _, c in per) > 0, both.stdout
    assert int(pooled[2]) == sum(int(j) for _, j, _ in per), both.stdout
    short = sum(1 for same, judged, _ in per if int(same) < 0.95 * int(judged))
    assert int(pooled[3]) == short, both.stdout
    assert "pooled over" not in one.stdout


def test_the_pairs_chance_leaves_below_95_percent_is_binomial() -> None:
    spec = importlib.util.spec_from_file_location("compare_tolerance", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    chance = script.below_goal_by_chance
    assert chance([70, 20], 0.0) == 0.0
    assert chance([70, 20], 1.0) == pytest.approx(2.0)
    # 70 points keep 95% with up to 3 changed: P(X >= 4), X ~ Bin(70, 4%), 0.307 (simulated: 0.308).
    assert chance([70], 0.04) == pytest.approx(0.30711, abs=1e-4)
    # 19 of 20 is 95%, the goal met: only two or more changed fall below it.
    assert chance([20], 0.1) == pytest.approx(1 - 0.9 ** 20 - 20 * 0.1 * 0.9 ** 19)
