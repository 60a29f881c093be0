"""compare: metadata differences first, then per-point ratios judged against the sample noise."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "report"
sys.path.insert(0, str(FIXTURES))

import make_fixtures  # noqa: E402
import synth  # noqa: E402

from commatlas.compare import compare_runs, judge, mann_whitney_p, meta_differences, write_comparison_html  # noqa: E402
from commatlas.results import load_run  # noqa: E402


def one_point(tmp_path: Path, name: str, samples: np.ndarray, metric: str = "bandwidth"):
    rec = synth.result("gpu.ce_copy", "explicit_copy", "copy_engine", metric, {"src": 0, "dst": 1}, 1 << 20, samples)
    synth.write(tmp_path / name / "results.jsonl", [synth.meta(0, name), rec, synth.end()])
    return load_run(tmp_path / name).results[0]


def test_same_samples_are_not_different(tmp_path):
    s = synth.samples_for(1e-4, 64, np.random.default_rng(1), jitter=0.05)
    a, b = one_point(tmp_path, "a", s), one_point(tmp_path, "b", s.copy())
    v = judge(a, b)
    assert not v.different and v.p_value > 0.5


def test_two_draws_of_one_distribution_are_not_different(tmp_path):
    rng = np.random.default_rng(2)
    a = one_point(tmp_path, "a", synth.samples_for(1e-4, 64, rng, jitter=0.05))
    b = one_point(tmp_path, "b", synth.samples_for(1e-4, 64, rng, jitter=0.05))
    assert not judge(a, b).different


def test_shift_beyond_the_spread_is_different(tmp_path):
    rng = np.random.default_rng(3)
    a = one_point(tmp_path, "a", synth.samples_for(1e-4, 64, rng, jitter=0.02))
    b = one_point(tmp_path, "b", synth.samples_for(1.3e-4, 64, rng, jitter=0.02))
    v = judge(a, b)
    assert v.different and "do not overlap" in v.why


def test_small_consistent_shift_is_caught_by_the_rank_test(tmp_path):
    rng = np.random.default_rng(4)
    base = synth.samples_for(1e-4, 256, rng, jitter=0.05)
    a = one_point(tmp_path, "a", base)
    b = one_point(tmp_path, "b", base * 1.06)  # ranges overlap, but every sample moved 6%
    v = judge(a, b)
    assert v.different and v.why.startswith("rank test")


def test_mann_whitney_matches_known_values():
    assert mann_whitney_p(np.arange(10.0), np.arange(10.0)) == pytest.approx(1.0)
    # Complete separation of 10 vs 10: U = 0, z = (50 - 0.5) / 13.23 → p ≈ 1.8e-4.
    assert mann_whitney_p(np.arange(10.0), np.arange(10.0) + 100) == pytest.approx(1.8e-4, rel=0.05)


def test_meta_differences_list_versions_environment_and_gpus():
    a, b = synth.meta(4, "a"), synth.meta(4, "b", env={"NCCL_NVLS_ENABLE": "0", "NCCL_ALGO": "Ring"})
    b["engine"]["version"] = "0.2.0"
    b["topology"]["gpus"][0]["name"] = "NVIDIA H100"
    diffs = {k: (x, y) for k, x, y in meta_differences(a, b)}
    assert diffs["environment.NCCL_ALGO"] == ("(absent)", "Ring")
    assert diffs["engine.version"] == ("0.1.0", "0.2.0")
    assert diffs["topology.gpus[0].name"] == ("NVIDIA H200", "NVIDIA H100")
    assert "run_id" not in diffs and not any(k.startswith("environment.NCCL_NVLS") for k in diffs)


def test_compare_runs_finds_exactly_the_changed_benchmark(tmp_path):
    base = make_fixtures.gpu_like_records(seed=7)
    other = make_fixtures.gpu_like_records(seed=8)  # fresh noise everywhere
    for r in other:
        if r.get("benchmark") == "gpu.sm_copy" and r["type"] == "result":
            slower = np.array(r["samples_s"]) * 1.5
            other[other.index(r)] = synth.result(r["benchmark"], r["category"], r["interface"], r["metric"],
                                                 r["params"], r["bytes"], slower, peak=(r["peak"]["gbps"], "x"))
    synth.write(tmp_path / "a" / "results.jsonl", base)
    synth.write(tmp_path / "b" / "results.jsonl", other)
    [c] = compare_runs([tmp_path / "a", tmp_path / "b"])
    changed = {p.benchmark for p in c.different}
    assert changed == {"gpu.sm_copy"}
    assert all(p.improvement < 0.7 for p in c.different)
    assert len([p for p in c.points if p.benchmark == "gpu.sm_copy"]) == 30
    html = write_comparison_html([c], tmp_path / "cmp.html").read_text()
    assert html.count('class="worse"') == 30 and "<script" not in html


def test_cli_compare_prints_tables_and_writes_html(tmp_path):
    out = subprocess.run([sys.executable, "-m", "commatlas", "compare", str(FIXTURES / "gpu_like"),
                          str(FIXTURES / "gpu_like"), "--html", str(tmp_path / "c.html")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "0 of 141 common points differ" in out.stdout and "metadata: no difference" in out.stdout
    assert (tmp_path / "c.html").exists()
    one = subprocess.run([sys.executable, "-m", "commatlas", "compare", str(FIXTURES / "gpu_like")],
                         capture_output=True, text=True, timeout=120)
    assert one.returncode == 2 and "at least two runs" in one.stderr and "Traceback" not in one.stderr
