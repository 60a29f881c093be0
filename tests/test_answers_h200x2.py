"""The best-interface map's GPU-to-GPU rows, on the records of the first real multi-GPU run (2x H200,
NVLink, one rank per GPU under a CUDA-aware Open MPI; committed under results/nvidia-h200-x2/atlas-2gpu, whole in tests/fixtures/h200x2-atlas-2gpu).
The engine wrote them before it declared `movement.by` and `movement.participants`, so they also
check the documented fallbacks; the same records with both declared (as the engine writes them
now) must give the same map. Each test here failed on the map as it was first printed: "GPU 0 ⇄
GPU 1" twice, rank-keyed "GPU buffers" rows apart from the copies, "within GPU 1" from GPU 0's
STREAM copy, collectives split by the run's rank count, rows that said only "cache"."""
from __future__ import annotations

import io
import json
import re
import shutil
from collections import Counter

import pytest
from rich.console import Console

from commatlas.analysis.answers import collect, compute_answers
from commatlas.io.results import load_run, run_from_records
from commatlas.report import write_report
from commatlas.report.bestmap import map_rows
from commatlas.report.summary import print_summary
from conftest import fixture_run, terminal_map

RUN = fixture_run("h200x2-atlas-2gpu") / "default"
COLLECTIVES = ("allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "reduce")


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def answers() -> dict:
    return compute_answers(load_run(RUN))


@pytest.fixture(scope="module")
def contenders() -> dict[str, set[tuple[str, str]]]:
    """Per row label: (mechanism, benchmark) of every contender."""
    data, _ = collect(load_run(RUN))
    return {d.label: {(c.mechanism, c.benchmark) for c in d.contenders} for d in data}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[str, str]:
    out = tmp_path_factory.mktemp("h200x2")
    shutil.copy(RUN / "results.jsonl", out / "results.jsonl")
    paths = write_report(out)
    return paths.html.read_text(), paths.markdown.read_text()


def terminal(records: list[dict], width: int) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=width, force_terminal=True, color_system=None), records)
    return out.getvalue()


def rows_of(text: str) -> list[str]:
    """The terminal map's row labels, folded lines joined, in order."""
    return [label for label, _ in terminal_map(text)]


def movements(answers: dict, label: str) -> list[dict]:
    return [m for m in answers["movements"] if m["label"] == label]


# --- GPU 0 → GPU 1: every interface in one row ------------------------------------------------------

def test_gpu0_to_gpu1_is_one_row_where_every_interface_competes(answers, contenders) -> None:
    """Was: "GPU 0 → GPU 1" (copy engine, SM copy) apart from "GPU i → GPU j (×2)" (NCCL from one
    process) and "rank 0 → rank 1, GPU buffers" (IPC, NCCL one rank per GPU, GPU-aware and staged MPI)."""
    (row,) = movements(answers, "GPU 0 → GPU 1")
    assert row["from"] == {"memory": "gpu", "gpu": 0} and row["to"] == {"memory": "gpu", "gpu": 1}
    assert row["operation"] == "copy" and row["direction"] == "uni" and row["participants"] is None
    assert {"gpu.copy_ce", "gpu.copy_sm", "ipc.bandwidth", "nccl.bandwidth", "nccl.single.bandwidth",
            "mpi.gpu_aware.bandwidth", "mpi.staged.bandwidth"} <= {b for _, b in contenders["GPU 0 → GPU 1"]}
    assert set(row["mechanisms"]) == {"copy_engine", "sm_copy", "cuda_ipc_ce", "cuda_ipc_sm", "nccl",
                                      "mpi_gpu_aware", "mpi_staged"}
    # The copy engine at 256 MiB (394 GB/s, 82% of NVLink's 478 GB/s), CUDA IPC's copy engine at 4 GiB.
    cells = {c["bytes"]: c for c in row["cells"]}
    assert cells[256 << 20]["winner"]["mechanism"] == "copy_engine"
    assert round(cells[256 << 20]["winner"]["peak_fraction"], 2) == 0.82
    assert cells[4 << 30]["winner"]["mechanism"] == "cuda_ipc_ce"
    assert not [m for m in answers["movements"] if "rank" in (m["from"] or {}) and m["from"]["memory"] == "gpu"]


def test_gpu0_and_gpu1_both_ways_is_one_row(answers, contenders) -> None:
    """Was: "GPU 0 ⇄ GPU 1" twice, copy engine 769 GB/s and NCCL 730 GB/s."""
    (row,) = movements(answers, "GPU 0 ⇄ GPU 1")
    assert {"gpu.copy_ce", "gpu.copy_sm", "nccl.bibw", "nccl.single.bibw", "mpi.gpu_aware.bibw",
            "mpi.staged.bibw"} <= {b for _, b in contenders["GPU 0 ⇄ GPU 1"]}
    best = max((c["winner"] for c in row["cells"] if c["winner"]), key=lambda w: w["value"])
    assert (best["mechanism"], round(best["value"])) == ("copy_engine", 769)


def test_one_message_latency_competes_with_a_copy_and_says_what_it_timed(answers, contenders, report) -> None:
    """Was: "GPU 0 → GPU 1 (latency)" (copy engine) apart from "GPU 0 → GPU 1" (NCCL ping-pong from
    one process) and "rank 0 → rank 1, GPU buffers, ping-pong"."""
    (row,) = movements(answers, "GPU 0 → GPU 1 (latency)")
    assert {"gpu.copy_latency", "nccl.pingpong", "nccl.single.pingpong", "ipc.pingpong", "mpi.gpu_aware.pingpong",
            "mpi.staged.pingpong"} <= {b for _, b in contenders["GPU 0 → GPU 1 (latency)"]}
    first = row["cells"][0]
    # At 8 B the launch-inclusive copy (6.68 us) and the ping-pongs compare; each says what it timed.
    assert first["bytes"] == 8 and first["winner"]["mechanism"] == "copy_engine"
    assert first["winner"]["includes"].startswith("API call + launch + copy + synchronize")
    assert first["runner_up"]["includes"].startswith("half a round trip")
    html, _ = report
    assert "timed: half a round trip" in html and "timed: API call + launch + copy + synchronize" in html


def test_collectives_key_by_participants_whichever_way_nccl_was_launched(answers, contenders) -> None:
    """Was: "allreduce, GPU buffers, 1 ranks" (nccl.single, one process) apart from "..., 2 ranks"."""
    for op in COLLECTIVES:
        rows = [m for m in answers["movements"] if m["operation"] == op and m["from"]["memory"] == "gpu"]
        assert [m["label"] for m in rows] == [f"{op}, GPU buffers, 2 ranks"], op
        assert rows[0]["participants"] == 2
        assert {f"nccl.{op}", f"nccl.single.{op}"} <= {b for _, b in contenders[rows[0]["label"]]}, op
    assert not [m for m in answers["movements"] if ", 1 ranks" in m["label"]]


def test_a_copy_kernel_on_another_gpu_is_not_a_copy_within_that_gpu(answers) -> None:
    """Was: "within GPU 1: GPU load/store up to 648 GB/s 68%", GPU 0's SMs copying GPU 1's memory."""
    assert not movements(answers, "within GPU 1")
    (row,) = movements(answers, "GPU 0 copies within GPU 1")
    assert row["by"] == {"memory": "gpu", "gpu": 0, "processor": True}
    assert row["mechanisms"] == ["gpu_load_store"]
    (within,) = movements(answers, "within GPU 0")  # GPU 0's own STREAM copy still competes there
    assert "gpu_load_store" in within["mechanisms"] and within["by"] is None


def test_host_buffer_mpi_stays_apart_from_cpu_copies(answers) -> None:
    host_mpi = [m for m in answers["movements"] if m["from"] and m["from"].get("rank") is not None]
    assert sorted(m["label"] for m in host_mpi) == ["rank 0 → rank 1, host buffers",
                                                    "rank 0 → rank 1, host buffers, ping-pong",
                                                    "rank 0 ⇄ rank 1, host buffers"]
    assert all(m["mechanisms"] == ["mpi_host"] and m["from"]["memory"] == "host" for m in host_mpi)
    (cpu,) = movements(answers, "CPU memory, copy")
    assert cpu["mechanisms"] == ["cpu_memcpy"]


# --- what a user reads ----------------------------------------------------------------------------------

def test_no_row_label_twice_and_no_merged_row_that_hides_what_it_merges(answers, records, report) -> None:
    labels = [m["label"] for m in answers["movements"]]
    assert not [x for x, n in Counter(labels).items() if n > 1]
    rows, _ = map_rows(answers)
    shorts = [r.short for r in rows]
    assert not [x for x, n in Counter(shorts).items() if n > 1]
    for r in rows:
        if r.also:  # a merged row names every GPU pair it stands for
            assert re.search(r"\(i(,j)? = ", r.short), r.short
    for width in (80, 100):
        printed = rows_of(terminal(records, width))
        assert not [x for x, n in Counter(printed).items() if n > 1], width
        assert not [x for x in printed if "×" in x], width
        assert "GPU 0 → GPU 1" in printed and "GPU 0 ⇄ GPU 1" in printed
    html, markdown = report
    md_rows = [line.split("](")[0][3:] for line in markdown.splitlines() if line.startswith("| [")]
    assert not [x for x, n in Counter(md_rows).items() if n > 1]


def test_no_figure_reads_zero_percent(records, report) -> None:
    """Was: "rank 0 ⇄ rank 1, GPU buffers  1 B–4 KiB  GPU-aware MPI  0.00333 GB/s 0.0%": the GPU
    buffers of the MPI phase were a row of their own, whose only common small size was 8 B; in the one
    row the copies' 4 KiB is where most contenders compare. An 8 B collective still reads "<0.1%"."""
    text = terminal(records, 100)
    text = text[:text.index("Findings")]
    html, markdown = report
    maps = [text, markdown[markdown.index("## Best interface"):markdown.index("## Findings")],
            *re.findall(r'<table class="map">.*?</table>', html, re.S)]
    for where in maps:
        assert "0.0%" not in where
    assert "<0.1%" in maps[1]


def test_cache_only_cells_name_their_fastest_mechanism(records, report) -> None:
    """Was: "within GPU 0 (latency)  1 B–64 KiB  cache  8.57 us–8.7 us": no mechanism named."""
    lines = terminal(records, 100).splitlines()
    lines = lines[:lines.index("Findings")]
    row = next(line for line in lines if line.startswith("within GPU 0 (latency)"))
    assert re.search(r"copy engine\s+8\.45 us–8\.7 us in cache", row), row  # from 8 B, the smallest measured
    assert not [line for line in lines if re.search(r"\s{2}cache\s{2}", line)]
    html, markdown = report
    assert "*copy engine (in cache)* 8.45 us" in markdown
    assert '<td class="cache" title="copy engine (in cache): ' in html


# --- the engine's declarations ------------------------------------------------------------------------

def declared(records: list[dict]) -> list[dict]:
    """The same records as the engine writes them now: stream copies name the GPU whose SMs copy
    (`by`) instead of a choice `gpu`; collectives and patterns say how many take part."""
    out = json.loads(json.dumps(records))
    for r in out:
        m = r.get("movement")
        if r.get("type") != "result" or not m:
            continue
        if r["benchmark"] == "gpu.stream_copy":
            m["by"] = {"memory": "gpu", "gpu": m["choices"].pop("gpu"), "numa": None, "rank": None, "node": "vm",
                       "processor": True, "allocator": None, "first_touch": None}
        if m["operation"] not in ("copy", "read", "write", "load_latency", "send_recv", "ping_pong", "nothing"):
            m["participants"] = 2  # both GPUs, whether one process drove them or one rank each did
    return out


def test_declared_by_and_participants_give_the_same_map(records, answers, validator) -> None:
    now = declared(records)
    for r in now:
        if r.get("type") == "result":
            assert not list(validator.iter_errors(r)), r["point"]
    again = compute_answers(run_from_records(now))
    assert [m["key"] for m in again["movements"]] == [m["key"] for m in answers["movements"]]
    assert [m["label"] for m in again["movements"]] == [m["label"] for m in answers["movements"]]
    (peer,) = movements(again, "GPU 0 copies within GPU 1")
    assert peer["key"] == "copy|uni|bandwidth|gpu1->gpu1|by gpu0.sm"
    assert {m["participants"] for m in again["movements"] if m["operation"] in COLLECTIVES} == {2}


def test_the_fallback_reads_the_single_process_gpu_list_not_the_run_size(records) -> None:
    """A single-process NCCL collective over GPUs 0 and 1 written before participants existed has
    ranks 1; its participants come from `params.gpus` (its launch is single_process)."""
    only_single = [r for r in records if r.get("type") != "result" or r["benchmark"].startswith("nccl.single.")]
    answers = compute_answers(run_from_records(only_single))
    allreduce = next(m for m in answers["movements"] if m["operation"] == "allreduce")
    assert allreduce["participants"] == 2 and allreduce["label"] == "allreduce, GPU buffers, 2 ranks"


def test_a_cell_no_rival_measured_says_alone(answers) -> None:
    """Families sweep different sizes: where only one mechanism of a row measured a size, the cell
    says "(alone)" instead of calling that mechanism fastest; a row with one mechanism never does."""
    from commatlas.report.bestmap import bands

    rows, _ = map_rows(answers)
    by_label = {row.label: row for row in rows}
    latency = by_label["GPU 0 → GPU 1 (latency)"]
    # Only the NCCL ping-pongs measured 16 MiB and up (IPC and MPI ping-pongs stop at 4 MiB here).
    top = [b for b in bands(latency) if b.low >= 16 << 20]
    assert top and all(b.name == "NCCL (alone)" for b in top), [(b.low, b.name) for b in bands(latency)]
    assert any(not b.name.endswith("(alone)") for b in bands(latency))
    single = by_label["GPU 0 reads GPU 1"]
    assert not any(c.alone for c in single.cells if c), "one mechanism in the row: nothing to be alone from"


def test_the_report_map_marks_alone_cells_and_keeps_ties_readable(report) -> None:
    html, _ = report
    assert '<span class="pct">alone</span>' in html
    # A tie is striped, not faded: its figure stays as dark as a clear winner's.
    assert "td.tie { opacity" not in html and "table.map td.tie { color: #111" in html


def test_a_crossover_says_where_no_winner_is_clear(report) -> None:
    """Was "copy engine is fastest up to 4 KiB, GPU-aware MPI from 256 KiB", silent on 64 KiB, where
    neither win is clear: read as if the copy engine won up to 256 KiB."""
    _, markdown = report
    assert ("GPU 0 → GPU 1: copy engine is fastest up to 4 KiB (1.16× at 4 KiB), no clear winner at 64 KiB, "
            "GPU-aware MPI from 256 KiB (33.3× at 64 MiB).") in markdown
    # Adjacent clear cells need no such words.
    assert "allgather, GPU buffers, 2 ranks: NCCL is fastest up to 1 MiB (2.67× at 64 KiB), GPU-aware MPI from" in markdown
