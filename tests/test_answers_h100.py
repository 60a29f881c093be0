"""The movement model's promises, checked on the records a real single-GPU run wrote (one H100, committed
under results/nvidia-h100-x1/atlas-default, whole in tests/fixtures/h100-atlas-default): the engine declared every movement itself there, so
nothing in this test is a fixture written by hand or labelled by a script."""
from __future__ import annotations

import json

import pytest

from commatlas.analysis.answers import compute_answers
from commatlas.io.results import load_run
from conftest import fixture_run, terminal_map

RUN = fixture_run("h100-atlas-default") / "default"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def answers() -> dict:
    return compute_answers(load_run(RUN))


def test_every_record_declares_its_movement(records) -> None:
    points = [r for r in records if r["type"] in ("result", "skip", "error")]
    assert points and all("movement" in r for r in points)


def test_no_fraction_above_one_and_cache_figures_carry_no_peak(records) -> None:
    for r in (r for r in records if r["type"] == "result"):
        peak = r.get("peak") or {}
        assert peak.get("fraction", 0) <= 1.0, r["point"]
        if r["movement"].get("cache_resident") and peak:  # latencies carry no peak at all
            assert peak.get("gbps") is None and peak.get("unknown"), r["point"]


def test_no_winner_is_cache_resident_and_alternatives_share_the_movement(answers, records) -> None:
    by_point = {r["point"]: r for r in records if r["type"] == "result"}
    for m in answers["movements"]:
        for cell in m["cells"]:
            for role in ("winner", "runner_up"):
                pick = cell.get(role)
                if not pick:
                    continue
                record = by_point[pick["point"]]
                assert not record["movement"].get("cache_resident"), (m["label"], cell["bin"], role)
                # Same operation, direction and metric as the row: h2d never competes with d2h,
                # read never with write, a latency never with a bandwidth. A message is a move like
                # a copy (send/recv in a copy row, a ping-pong's half round trip in a copy latency row).
                operation, direction = record["movement"]["operation"], record["movement"]["direction"]
                if operation in ("send_recv", "ping_pong"):
                    operation, direction = "copy", "uni" if direction == "half_round_trip" else direction
                assert operation == m["operation"], (m["label"], pick["point"])
                assert direction == m["direction"], (m["label"], pick["point"])
                assert record["metric"] == m["metric"], (m["label"], pick["point"])
                assert record["movement"]["from"]["memory"] == m["from"]["memory"], (m["label"], pick["point"])
                assert record["movement"]["to"]["memory"] == m["to"]["memory"], (m["label"], pick["point"])


def test_findings_are_short_sentences_without_parameter_dumps(answers) -> None:
    findings = answers["findings"]
    assert 0 < len(findings) <= 12
    for f in findings:
        text = f["text"]
        assert len(text) <= 200 and text.endswith("."), text
        assert "=" not in text, f"parameter dump in a finding: {text}"


# --- host places: one NUMA node is one place ----------------------------------------------------

def _host_copies(answers: dict) -> list[dict]:
    return [m for m in answers["movements"] if m["operation"] == "copy" and "rank" not in m["from"]
            and m["from"]["memory"] == "host" and m["to"]["memory"] == "host" and m["metric"] == "bandwidth"]


def _cpu_chases(answers: dict) -> list[dict]:
    return [m for m in answers["movements"] if m["operation"] == "load_latency" and m["to"].get("processor")
            and m["to"]["memory"] == "host"]


def test_one_numa_node_host_memory_is_one_place(answers) -> None:
    """Was: host.pointer_chase (NUMA 0, placed by libnuma) and host.pointer_chase_gpu_memory (pinned,
    NUMA not placed) were two movements, two "CPU load latency, host memory" rows on a one-node host."""
    chases = _cpu_chases(answers)
    assert len(chases) == 1 and set(chases[0]["mechanisms"]) == {"cpu_load_store"}
    assert {c["winner"]["benchmark"] if c["winner"] else c["cache_figure"]["benchmark"] for c in chases[0]["cells"]} \
        == {"host.pointer_chase", "host.pointer_chase_gpu_memory"}
    assert chases[0]["from"] == {"memory": "host"} and chases[0]["to"] == {"memory": "host", "processor": True}
    # A GPU kernel copying pinned host memory (gpu.stream_copy, GPU 0's SMs) crosses PCIe twice: a
    # movement of its own, apart from the CPU's memcpy.
    copies = {m["label"]: m for m in _host_copies(answers)}
    assert set(copies) == {"CPU memory, copy", "GPU 0 copies within host memory"}, sorted(copies)
    assert copies["CPU memory, copy"]["mechanisms"] == ["cpu_memcpy"]
    assert copies["CPU memory, copy"]["from"] == {"memory": "host"} and copies["CPU memory, copy"]["by"] is None
    assert copies["GPU 0 copies within host memory"]["by"] == {"memory": "gpu", "gpu": 0, "processor": True}
    labels = [m["label"] for m in answers["movements"]]
    assert len(labels) == len(set(labels)), sorted(x for x in labels if labels.count(x) > 1)


def _with_numa_nodes(records: list[dict], nodes: list[int]) -> list[dict]:
    out = [dict(r) for r in records]
    meta = json.loads(json.dumps(out[0]))
    meta["engine"]["host"]["numa_nodes"] = nodes
    out[0] = meta
    return out


def test_several_numa_nodes_keep_a_placed_and_an_unplaced_buffer_apart(records) -> None:
    """The same records as if the host had two NUMA nodes: NUMA 0 (host.memcpy) and pinned memory
    the engine did not place may be on different nodes, so they stay two movements, named apart."""
    from commatlas.io.results import run_from_records

    answers = compute_answers(run_from_records(_with_numa_nodes(records, [0, 1])))
    chases = {m["label"]: m for m in _cpu_chases(answers)}
    assert set(chases) == {"CPU (NUMA 0) load latency, host memory (NUMA 0)", "CPU load latency, host memory"}
    assert chases["CPU (NUMA 0) load latency, host memory (NUMA 0)"]["from"] == {"memory": "host", "numa": 0}
    copies = {m["label"]: m for m in _host_copies(answers)}
    assert copies["CPU memory (NUMA 0), copy"]["mechanisms"] == ["cpu_memcpy"]
    assert copies["CPU memory (NUMA 0), copy"]["from"] == {"memory": "host", "numa": 0}


def test_a_record_on_another_node_than_the_meta_names_is_not_merged(records) -> None:
    """No meta's word against a record's: a run whose records name NUMA 1 has more than one node."""
    from commatlas.io.results import run_from_records

    changed = [json.loads(json.dumps(r)) for r in records]
    for r in changed:
        if r.get("benchmark") == "host.pointer_chase" and r["type"] == "result":
            r["movement"]["from"]["numa"] = r["movement"]["to"]["numa"] = 1
    answers = compute_answers(run_from_records(changed))
    assert len(_cpu_chases(answers)) == 2


# --- sizes shown are sizes measured -------------------------------------------------------------

def _band_sizes(records: list[dict], width: int) -> dict[str, list[str]]:
    """The terminal map's sizes column, per movement (its label, folded lines joined), as printed."""
    import io

    from rich.console import Console

    from commatlas.report.summary import print_summary

    out = io.StringIO()
    print_summary(Console(file=out, width=width, force_terminal=True, color_system=None), records)
    return dict(terminal_map(out.getvalue()))


def test_terminal_bands_show_the_sizes_measured_not_bin_bounds(records, answers) -> None:
    """Was: "host memory → GPU 0  1 B–256 MiB" (nothing below 4 KiB was measured there), and
    "within GPU 0  64 MiB–256 MiB" (only 256 MiB was)."""
    from commatlas.report.bestmap import bands, map_rows

    table = _band_sizes(records, 100)
    assert table["host memory → GPU 0"] == ["4 KiB–256 MiB"]
    # gpu.copy_latency's 8 B, 4 and 32 KiB: the smallest size measured is shown, not hidden in a 4 KiB bin.
    assert table["host memory → GPU 0 (latency)"] == ["8 B–32 KiB"]
    # Cache-resident bands name their fastest mechanism: the copy engine up to 1 MiB, the SM copy
    # at 16 MiB (was one "cache" band), then the copy engine from HBM.
    assert table["within GPU 0"] == ["4 KiB–1 MiB", "16 MiB", "256 MiB"]
    assert table["rank 0 → rank 1, host buffers, ping-pong"] == ["1 B–1 MiB"]  # the 1 B ping-pong was measured
    for width in (100, 80):  # "1 B" only where 1 B was measured (MPI), never a bin's bound
        assert {k for k, sizes in _band_sizes(records, width).items() if any(s.startswith("1 B") for s in sizes)} \
            <= {k for k in table if k.startswith("rank 0")}
    rows, _ = map_rows(answers)
    for mrow in rows:
        for band in bands(mrow):
            sizes = {c.bytes for c in mrow.cells if c is not None}
            assert band.low in sizes and band.high in sizes, (mrow.label, band)


def test_map_columns_are_headed_by_the_sizes_measured(tmp_path) -> None:
    """Was: summary.md and report.html headed columns with bins ("4–16 MiB" over 16 MiB figures)
    and kept a column no movement measured in (4–16 KiB)."""
    import shutil

    from commatlas.report import write_report

    shutil.copy(RUN / "results.jsonl", tmp_path / "results.jsonl")
    paths = write_report(tmp_path)
    markdown = paths.markdown.read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| movement |"))
    assert header == "| movement | 8 B | 4 KiB | 64 KiB | 256 KiB | 1 MiB | 2 MiB | 16 MiB | 32 MiB | 256 MiB |"
    row = next(line for line in markdown.splitlines() if line.startswith("| [allgather, host buffers"))
    assert row.split(" | ")[2] == "MPI 0.384 GB/s at 1 KiB"  # measured at 1 KiB, in the 4 KiB column
    html = paths.html.read_text()
    assert '<th title="bin 4–16 MiB">16 MiB</th>' in html and "<th>4–16 KiB</th>" not in html
