"""What a reader of the report sees: plots whose titles fit and say each thing once, whose axes
read in the unit of their data and show numbers even for one point, no legend for one line; a
machine section in words ("1 NUMA node (0)"), reasons without engine source paths; --tune's
verdicts in report.html and summary.md. Records: real engine runs (tests/fixtures/report/
host_quick_vm: the engine built here, --quick on a 2-core VM; tests/fixtures/h200x2-atlas-2gpu:
a committed 2x H200 run and its --tune nccl pass)."""
from __future__ import annotations

import io
import re

import numpy as np
from rich.console import Console

from commatlas.analysis.answers import collect
from commatlas.analysis.answers import compute_answers
from commatlas.io.results import load_run
from commatlas.report import plots, write_report
from commatlas.report.bestmap import map_rows
from commatlas.report.figures import movement_figures
from commatlas.report.machine import describe_machine
from commatlas.report.views import print_info
from conftest import FIXTURES, fixture_json, fixture_run

VM = FIXTURES / "report" / "host_quick_vm"
H200 = fixture_run("h200x2-atlas-2gpu") / "default"
TUNE = fixture_run("h200x2-atlas-2gpu") / "tune"


def figures_of(run_dir):
    run = load_run(run_dir)
    data, _ = collect(run)
    rows, _ = map_rows(compute_answers(run))
    return movement_figures(data, rows)


def yticks(svg: str) -> list[float]:
    """The value axis's labelled numbers."""
    out = []
    for chunk in svg.split('<g id="ytick_')[1:]:
        label = re.search(r"<text[^>]*>([^<]*)</text>", chunk, re.S)
        if label and re.fullmatch(r"[-0-9.e+]+", label.group(1)):
            out.append(float(label.group(1)))
    return out


def test_a_one_point_plot_has_numbers_on_its_value_axis():
    # Labelled numbers on both sides of the value, near enough to read it between them.
    for value in (0.47, 3.0, 130.0):
        line = plots.Line("x", np.array([4096.0]), np.array([value]))
        ticks = yticks(plots.curves_svg([line], title="t", ylabel="latency (µs, median)"))
        assert any(value / 2.5 <= t <= value for t in ticks) and any(value <= t <= value * 2.5 for t in ticks), \
            (value, ticks)
    box = plots.boxes_svg([8.0], [np.array([0.40, 0.45, 0.47, 0.5, 0.52])], title="t")
    assert len(yticks(box)) >= 2


def test_one_line_has_no_legend_and_several_have_one():
    a = plots.Line("all", np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    b = plots.Line("other", np.array([1.0, 2.0]), np.array([2.0, 3.0]))
    assert 'id="legend_1"' not in plots.curves_svg([a], title="t", ylabel="y")
    assert 'id="legend_1"' in plots.curves_svg([a, b], title="t", ylabel="y")


def test_long_titles_are_wrapped_not_cut():
    title = "distribution per size: " + "host.pointer_chase cpu_numa=0 mem_numa=0 numa_placement=libnuma " * 3
    svg = plots.boxes_svg([8.0, 64.0], [np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])], title=title)
    # Each line of the title is its own text line, none wider than the figure holds.
    lines = [t for t in re.findall(r">([^<>]*numa[^<>]*)<", svg)]
    assert len(lines) >= 3 and all(len(t) <= 85 for t in lines), lines


def test_latency_axes_read_in_the_unit_of_their_data():
    figs = {f.title: f for f in figures_of(VM)}
    chase = next(f for t, f in figs.items() if "load latency" in t)
    assert chase.svg.kwargs["ylabel"] == "latency (ns, median)"
    values = np.concatenate([line.values for line in chase.svg.args[0]])
    assert values.max() > 100  # 110-193 ns, drawn as ns, not 0.11-0.19 µs
    assert plots.time_unit(np.array([30_000.0])) == (1e-3, "ms")


def test_titles_say_each_thing_once_in_words():
    titles = [f.title for f in figures_of(H200)]
    assert titles
    for t in titles:
        assert "all_to_all" not in t and ", uni," not in t and "one_to_all" not in t, t
    # A collective's label already names it: "allreduce, GPU buffers, 2 ranks: bandwidth", once.
    assert all(t.count("allreduce") <= 1 for t in titles), titles


def test_machine_section_in_words_without_source_paths():
    meta = load_run(VM).meta
    facts = dict(describe_machine(meta).facts)
    assert facts["NUMA"] == "1 NUMA node (0)"
    assert facts["host memory peak"].startswith("unknown: no SMBIOS tables")
    m = describe_machine(meta)
    text = repr(m)
    assert ".cu:" not in text and ".cpp:" not in text
    assert "topology_cuda" in (VM / "results.jsonl").read_text()  # the record keeps it


def test_machine_section_says_what_state_every_job_started_from(engine_info):
    # The meta record's engine is `commatlas-engine info`: this engine's own.
    facts = dict(describe_machine({"engine": engine_info}).facts)
    assert facts["process state: heap"] == engine_info["process_state"]["heap"]["why"]
    assert "malloc thresholds fixed" in facts["process state: heap"]
    if "rank_gpu_writes" in engine_info["process_state"]:  # built with MPI and a GPU runtime
        assert facts["process state: rank GPU writes"].startswith("each MPI rank's GPU writes 16 x 32 MiB")


def test_info_says_1_numa_node():
    out = io.StringIO()
    print_info(Console(file=out, width=100, color_system=None), fixture_json("info_host_only.json"))
    assert "1 NUMA node (0)" in out.getvalue()


def test_tune_verdicts_are_in_the_report_and_summary(tmp_path):
    paths = write_report(TUNE, tmp_path)
    verdict = "NCCL_MIN_NCHANNELS=32 is 1.07x faster than the default"
    assert verdict in paths.markdown.read_text()
    html = paths.html.read_text()
    assert 'id="tuning"' in html and "NCCL_MIN_NCHANNELS" in html
