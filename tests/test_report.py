"""The report: best-interface map and findings against the fixtures' known answers, the HTML
self-contained and complete, partial runs rendered with what is missing, and a headless browser
that must see every chart."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "report"
sys.path.insert(0, str(FIXTURES))

import make_fixtures  # noqa: E402
import synth  # noqa: E402

from commatlas.report import write_report  # noqa: E402
from commatlas.report.bestmap import best_interface_map  # noqa: E402
from commatlas.report.findings import find_effects  # noqa: E402
from commatlas.report.paths import path_of  # noqa: E402
from commatlas.report.variability import flag_points  # noqa: E402
from commatlas.results import group_series, load_run  # noqa: E402

KiB, MiB = 1024, 1024 * 1024


@pytest.fixture(scope="module")
def gpu_like():
    run = load_run(FIXTURES / "gpu_like")
    series, _ = group_series(run.results)
    maps = best_interface_map(series)
    flags = flag_points(run.results)
    return run, series, maps, flags, find_effects(series, maps, flags)


@pytest.fixture(scope="module")
def gpu_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_report")
    paths = write_report(FIXTURES / "gpu_like", out)
    return paths, paths.html.read_text()


def path_map(maps, category, **endpoints):
    want = tuple(sorted((k, str(v)) for k, v in endpoints.items()))
    return next(m for m in maps if m.path.category == category and tuple(sorted(m.path.endpoints)) == want)


def test_fixture_file_matches_its_generator():
    # The committed fixture is what make_fixtures.py writes: its model is the test's answer key.
    committed = [json.loads(line) for line in (FIXTURES / "gpu_like" / "results.jsonl").read_text().splitlines()]
    assert committed == json.loads(json.dumps(make_fixtures.gpu_like_records()))


def test_best_map_copy_engine_vs_sm_crossover(gpu_like):
    _, _, maps, _, _ = gpu_like
    m = path_map(maps, "explicit_copy", src=0, dst=1)
    winners = {s.size: s.winner for s in m.standings}
    assert all(winners[b].startswith("sm_kernel") for b in make_fixtures.SIZES if b <= 4 * MiB)
    assert all(winners[b].startswith("copy_engine") for b in make_fixtures.SIZES if b >= 16 * MiB)
    [c] = m.crossovers
    assert c.between == (4 * MiB, 16 * MiB)
    assert 6 * MiB < c.at < 9 * MiB  # the model crosses at 7.2 MB = 6.87 MiB
    # At 1 KiB the SM copy (2 µs) beats the copy engine (8 µs) by about 4×.
    first = m.standings[0]
    assert first.size == KiB and 3.5 < first.margin < 4.5 and first.clear


def test_best_map_only_compares_same_endpoints(gpu_like):
    _, _, maps, _, _ = gpu_like
    for m in maps:
        assert {path_of(s) for s in m.series.values()} == {m.path}
    # Pageable and pinned host sources are different endpoints: never ranked against each other.
    assert not any("src_allocator" in dict(m.path.endpoints) for m in maps)
    assert not any(m.path.category == "reference" for m in maps)
    # Thread counts say how, not where: they compete on one path.
    memcpy = path_map(maps, "explicit_copy", src_numa=0, dst_numa=0)
    assert sorted(memcpy.series) == ["memcpy [host.memcpy, threads=1]", "memcpy [host.memcpy, threads=4]"]


def test_best_map_latency_and_collective_crossovers(gpu_like):
    _, _, maps, _, _ = gpu_like
    p2p = path_map(maps, "point_to_point", memory="device")
    [c] = p2p.crossovers
    assert c.below.startswith("mpi_staged") and c.above.startswith("nccl")
    assert 300 * KiB < c.at < 380 * KiB  # model: 338 KiB
    coll = path_map(maps, "collective", memory="device")
    [c] = coll.crossovers
    assert c.below.startswith("mpi") and c.above.startswith("nccl")
    assert 90 * KiB < c.at < 120 * KiB  # model: 105 KiB


def test_findings_state_the_known_effects(gpu_like):
    *_, found = gpu_like
    text = "\n".join(f.text for f in found)
    ratio = re.search(r"src_allocator=pageable is ([\d.]+)× slower than src_allocator=pinned at 256 MiB", text)
    assert ratio and 4.7 < float(ratio.group(1)) < 5.7  # model: 52/10 GB/s
    threads = re.search(r"host.memcpy with 4 threads is ([\d.]+)× faster than with 1 thread at 256 MiB", text)
    assert threads and 2.7 < float(threads.group(1)) < 3.3
    assert re.search(r"copy_engine \[gpu.ce_copy\] plateaus at 8\d% of peak over 3 placements", text)
    assert re.search(r"sm_kernel \[gpu.sm_copy\] plateaus at 6\d%", text)
    assert "sm_kernel [gpu.sm_copy] beats copy_engine [gpu.ce_copy] below ≈" in text
    assert "mpi_staged [p2p.mpi_staged_pingpong] beats nccl [p2p.nccl_pingpong]" in text


def test_only_the_planted_bimodal_point_is_flagged(gpu_like):
    _, _, _, flags, found = gpu_like
    bimodal = [f for f in flags if f.kind == "bimodal"]
    assert [(f.result.benchmark, f.result.bytes) for f in bimodal] == [("p2p.mpi_staged_pingpong", 64 * KiB)]
    low, high = bimodal[0].modes
    assert 2.2 < high / low < 2.8  # planted: half the samples 2.5× slower
    assert any("bimodal at 1 size(s) (64 KiB)" in f.text for f in found)


def test_no_finding_without_its_series(tmp_path):
    # Only the copy-engine series: nothing to cross over with, no allocator or thread pairs.
    records = [r for r in make_fixtures.gpu_like_records() if r.get("benchmark") in (None, "gpu.ce_copy")]
    synth.write(tmp_path / "results.jsonl", records)
    run = load_run(tmp_path)
    series, _ = group_series(run.results)
    maps = best_interface_map(series)
    texts = [f.text for f in find_effects(series, maps, flag_points(run.results))]
    assert maps == []
    assert not any("beats" in t or "slower than" in t or "threads" in t or "bimodal" in t for t in texts)
    assert len(texts) == 1 and "plateaus" in texts[0]


def test_html_is_self_contained_and_complete(gpu_report, gpu_like):
    paths, html = gpu_report
    *_, found = gpu_like
    assert paths.html.exists() and paths.markdown.exists()
    assert not re.search(r"<script|<link|src=\"https?:|@import|url\(http", html)
    ids = set(re.findall(r'id="([^"]+)"', html))
    for f in found:
        assert f.anchor in ids, f.text
    for category in ("explicit_copy", "point_to_point", "collective"):
        assert f'id="cat-{category}"' in html
    assert html.count("<svg") >= 10  # 8 curve plots, 2 pair heatmaps, 4 distributions
    assert "pair matrices" in html and "bus bandwidth" in html
    assert "managed memory prefetch is not supported on this device" in html
    assert "data check failed: first bad byte at offset 4096" in html
    assert "nvlink ×18, 478.1 GB/s" in html  # topology matrix with the path's peak
    assert "NCCL_NVLS_ENABLE" in html
    assert paths.html.stat().st_size < 5_000_000


def test_markdown_summary_links_findings_to_plots(gpu_report):
    paths, _ = gpu_report
    md = paths.markdown.read_text()
    assert "## Findings" in md and "(report.html#plot-" in md
    assert "| 16 MiB – 256 MiB | copy_engine [gpu.ce_copy] |" in md


def test_interrupted_run_renders_what_exists_and_lists_what_is_missing(tmp_path):
    records = make_fixtures.gpu_like_records()[:-1]  # no end record
    synth.write(tmp_path / "results.jsonl", records[:60])
    with open(tmp_path / "results.jsonl", "a") as f:
        f.write(json.dumps(records[60])[:100])  # killed mid-record
    paths = write_report(tmp_path)
    html = paths.html.read_text()
    assert "incomplete (no end record" in html
    assert "line 61 is truncated" in html
    assert "The last record (line 60)" in html
    assert "<svg" in html


def test_report_of_a_real_host_run(tmp_path):
    paths = write_report(FIXTURES / "host", tmp_path)
    html = paths.html.read_text()
    assert "reference.harness_overhead" in html and "<svg" in html
    assert "One timed operation of the harness costs" in paths.markdown.read_text()


def test_cli_report_and_bad_input(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "commatlas", "report", str(FIXTURES / "host"), "--out", str(tmp_path)],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "report.html").exists()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.jsonl").write_text('{"type":"meta"}\n{oops\n')
    bad = subprocess.run([sys.executable, "-m", "commatlas", "report", str(tmp_path / "bad")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "results.jsonl:2: not valid JSON" in bad.stderr
    assert "Traceback" not in bad.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (apt-get install chromium)")
def test_headless_browser_sees_every_chart(gpu_report, tmp_path):
    from matplotlib.image import imread

    paths, html = gpu_report
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(args + ["--dump-dom", paths.html.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0
    assert dom.stdout.count("<svg") == html.count("<svg")  # every inline chart parsed into the page
    assert "Uncaught" not in dom.stderr and "CONSOLE" not in dom.stderr
    shot = tmp_path / "report.png"
    subprocess.run(args + [f"--screenshot={shot}", "--window-size=1280,3000", paths.html.as_uri()],
                   capture_output=True, text=True, timeout=120)
    pixels = imread(shot)[..., :3]
    drawn = (pixels.min(axis=2) < 0.9).mean()  # share of pixels that are not white-ish
    assert drawn > 0.05


def test_winners_flipping_inside_the_noise_are_not_crossovers(tmp_path):
    rng = np.random.default_rng(5)
    records = [synth.meta(0, "ties")]
    for bench, iface in [("gpu.sm_read", "sm_kernel"), ("gpu.sm_write", "sm_kernel_write")]:
        for b in make_fixtures.SIZES:  # the same model for both: any winner is luck
            records.append(synth.result(bench, "direct_access", iface, "bandwidth", {"src": 0, "dst": 1}, b,
                                        synth.samples_for(2e-6 + b / 350e9, 48, rng, jitter=0.05)))
    synth.write(tmp_path / "results.jsonl", records)
    series, _ = group_series(load_run(tmp_path).results)
    [m] = best_interface_map(series)
    assert len({s.winner for s in m.standings}) == 2  # the noise does flip the raw winner here
    assert m.crossovers == [] and not any(s.clear for s in m.standings)


def test_more_threads_losing_is_said_as_slower(tmp_path):
    # Swap the thread counts of the two memcpy series: now 4 threads has the slow numbers.
    records = make_fixtures.gpu_like_records()
    for r in records:
        if r.get("benchmark") == "host.memcpy":
            r["params"]["threads"] = 4 if r["params"]["threads"] == 1 else 1
    synth.write(tmp_path / "results.jsonl", records)
    run = load_run(tmp_path)
    series, _ = group_series(run.results)
    text = "\n".join(f.text for f in find_effects(series, best_interface_map(series), flag_points(run.results)))
    slower = re.search(r"host.memcpy with 4 threads is ([\d.]+)× slower than with 1 thread at 256 MiB", text)
    assert slower and 2.7 < float(slower.group(1)) < 3.3
    assert "× faster than with 1 thread" not in text
