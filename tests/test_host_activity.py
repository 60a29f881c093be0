"""The host's witness of a figure that did not repeat (schema $defs.host_activity,
commatlas.analysis.host_activity): every harnessed point of a real engine run records what the
host did in its timed batches and in its confirmation batch, and an unstable point's slower pass
is described from those numbers: steal and other processes are called the machine's, extra
preemptions and page faults are stated, and a slower pass with none of them says so."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commatlas.analysis.answers import compute_answers
from commatlas.analysis.compare import compare_runs
from commatlas.analysis.host_activity import host_busy, host_witness, interference
from commatlas.io.results import load_run
from commatlas.report.bestmap import map_cell
from conftest import fixture_run, read_lines, slowed

KEYS = {"window_s", "cpu_ticks", "steal_share", "others_share", "steal_cpus", "most_stolen_cpu_s",
        "involuntary_switches", "page_faults", "cpu_pair"}


@pytest.fixture(scope="module")
def engine_run(engine_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two host benchmarks that each run at 16 MiB and 4 KiB, confirmed (a real engine run)."""
    out = tmp_path_factory.mktemp("host-activity")
    done = subprocess.run([str(engine_path), "run", "--only", "host.memcpy,reference.host_memcpy", "--sizes", "4K,16M",
                           "--threads", "2", "--time-budget", "0.05", "--out", str(out / "results.jsonl")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


def test_every_pass_of_a_real_run_records_the_host(engine_run: Path, validator) -> None:
    records = read_lines(engine_run / "results.jsonl")
    for number, record in enumerate(records, 1):
        problems = [e.message for e in validator.iter_errors(record)]
        assert not problems, f"line {number} ({record.get('type')}): {problems[:3]}"
    results = [r for r in records if r["type"] == "result"]
    confirmed = [r for r in records if r["type"] == "stability" and r["stability"]["verdict"] != "unchecked"]
    assert results and confirmed
    for r in results:
        a = r["timing"]["host_activity"]
        assert set(a) == KEYS and a["window_s"] > 0
        # Shares only where the window held enough clock ticks to tell one.
        assert (a["steal_share"] is None) == (a["cpu_ticks"] < 30)
    for s in confirmed:
        assert set(s["stability"]["host_activity"]) == KEYS


def _unstable(engine_run: Path, tmp: Path, slow: dict, fast: dict | None = None, point: str | None = None) -> Path:
    """The real run with a 16 MiB host.memcpy point (the first, or `point`) made unstable (the
    confirmation batch twice as slow) and the two passes' host activity updated as given."""
    records = read_lines(engine_run / "results.jsonl")
    point = point or next(r["point"] for r in records if r["type"] == "result" and r["benchmark"] == "host.memcpy"
                          and r["bytes"] == 16 << 20)
    for r in records:
        if r.get("point") != point:
            continue
        if r["type"] == "result":
            if fast:
                r["timing"]["host_activity"].update(fast)
            median = r["stats"]["median_s"]
            pair = r["timing"]["host_activity"].get("cpu_pair")
        elif r["type"] == "stability":
            st = r["stability"]
            st.update(verdict="unstable", passes_median_s=[median, 2 * median], spread=1.0, confirm_samples=5,
                      tolerance=0.1, separation_s=0.1)
            st.setdefault("host_activity", {k: 0 for k in KEYS})
            # Both passes where the host had the CPUs in the first: these tests are about the
            # counters, and a live run on a VM can meet two placements (tests/test_cpu_pair.py).
            st["host_activity"]["cpu_pair"] = pair
            st["host_activity"].update(slow)
    out = tmp / "run"
    out.mkdir(parents=True)
    (out / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (out / "planted").write_text(point)
    return out


def _memcpy(run: Path):
    """The planted point, as the report reads it."""
    planted = (run / "planted").read_text()
    return next(r for r in load_run(run).results if r.point == planted)


def test_steal_in_the_slower_pass_is_the_machines(engine_run: Path, tmp_path: Path) -> None:
    r = _memcpy(_unstable(engine_run, tmp_path, {"steal_share": 0.41, "others_share": 0.0, "cpu_ticks": 200,
                                                 "window_s": 0.05}))
    words = host_witness(r)
    assert "hypervisor took 41%" in words and "the confirmation batch" in words
    assert words.endswith("the machine's, not the tool's")


def test_one_held_cpu_is_the_machines_where_the_nodes_share_is_small(engine_run: Path, tmp_path: Path) -> None:
    """The 2x H100 stall (figures-that-hold-16): a 32-thread copy at 3 ms instead of 50 us in an
    11 ms confirmation pass whose node-wide steal was too few ticks for a share."""
    slow = {"window_s": 0.011, "cpu_ticks": 29, "steal_share": None, "others_share": None, "steal_cpus": 2,
            "most_stolen_cpu_s": 0.01, "involuntary_switches": 3, "page_faults": 0}
    words = host_witness(_memcpy(_unstable(engine_run, tmp_path, slow, fast={"involuntary_switches": 3})))
    assert "held a CPU of the VM for at least 10 ms of the pass's 11 ms (steal, on 2 CPUs)" in words
    assert words.endswith("the machine's, not the tool's")
    # A tick's worth on a long pass is no stall.
    slow.update(window_s=0.1, most_stolen_cpu_s=0.01)
    assert "held a CPU" not in host_witness(_memcpy(_unstable(engine_run, tmp_path / "long", slow)))


def test_other_processes_and_preemptions(engine_run: Path, tmp_path: Path) -> None:
    r = _memcpy(_unstable(engine_run, tmp_path,
                          {"steal_share": 0.0, "others_share": 0.6, "cpu_ticks": 200, "window_s": 0.1,
                           "involuntary_switches": 400},
                          fast={"involuntary_switches": 2, "window_s": 0.1}))
    words = host_witness(r)
    assert "other processes used 60%" in words
    assert "preemptions of this job's threads ran at 4,000/s against 20/s" in words


def test_extra_preemptions_alone_are_stated_not_judged(engine_run: Path, tmp_path: Path) -> None:
    r = _memcpy(_unstable(engine_run, tmp_path,
                          {"steal_share": 0.0, "others_share": 0.0, "cpu_ticks": 200, "window_s": 0.1,
                           "involuntary_switches": 400, "page_faults": 0},
                          fast={"involuntary_switches": 2, "window_s": 0.1, "page_faults": 0}))
    words = host_witness(r)
    assert "preemptions" in words and "machine's" not in words
    # A handful of preemptions is no rate to speak of, however short the window.
    r = _memcpy(_unstable(engine_run, tmp_path / "few",
                          {"steal_share": 0.0, "others_share": 0.0, "cpu_ticks": 200, "window_s": 0.001,
                           "involuntary_switches": 5, "page_faults": 0},
                          fast={"involuntary_switches": 0, "window_s": 0.1, "page_faults": 0}))
    assert "preemptions of this job's threads ran" not in host_witness(r)


def test_a_little_steal_is_reported_never_called_none(engine_run: Path, tmp_path: Path) -> None:
    """Call 4's stall (figures-that-hold-16): 3 ms a copy in a 15 ms pass with 2 of 52 ticks stolen,
    spread so that no CPU surely lost any."""
    slow = {"window_s": 0.015, "cpu_ticks": 52, "steal_share": 2 / 52, "others_share": 0.06, "steal_cpus": 0,
            "most_stolen_cpu_s": 0.0, "involuntary_switches": 3, "page_faults": 0}
    words = host_witness(_memcpy(_unstable(engine_run, tmp_path, slow, fast={"involuntary_switches": 3})))
    assert "steal 4% of the VM's CPU time (2 of 52 ticks, no CPU surely held)" in words
    assert "machine's" not in words


def test_a_quiet_host_says_the_cause_is_not_its_own(engine_run: Path, tmp_path: Path) -> None:
    r = _memcpy(_unstable(engine_run, tmp_path, {"steal_share": 0.0, "others_share": 0.02, "cpu_ticks": 200,
                                                 "involuntary_switches": 0, "page_faults": 0},
                          fast={"involuntary_switches": 0, "page_faults": 0}))
    assert "the host's counters name no cause: steal 0% of the VM's CPU time (0 of 200 ticks" in host_witness(r)
    short = _memcpy(_unstable(engine_run, tmp_path / "short", {"steal_share": None, "others_share": None,
                                                                "cpu_ticks": 3, "involuntary_switches": 0,
                                                                "page_faults": 0},
                              fast={"involuntary_switches": 0, "page_faults": 0}))
    assert "too short for CPU shares (3 clock ticks)" in host_witness(short)
    # Records from before the per-CPU fields (figures-that-hold-16, call 3) claim nothing per CPU.
    run = _unstable(engine_run, tmp_path / "older", {"steal_share": 0.02, "others_share": 0.0, "cpu_ticks": 200})
    for f in (run / "results.jsonl",):
        lines = [json.loads(x) for x in f.read_text().splitlines()]
        for r in lines:
            for a in ((r.get("timing") or {}).get("host_activity"), (r.get("stability") or {}).get("host_activity")):
                if a:
                    a.pop("steal_cpus"), a.pop("most_stolen_cpu_s")
        f.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    words = host_witness(_memcpy(run))
    assert "steal 2% of the VM's CPU time (4 of 200 ticks)" in words and "CPU surely" not in words


def test_the_map_cell_of_an_unstable_winner_carries_the_witness(engine_run: Path, tmp_path: Path) -> None:
    def choices_of(answers: dict) -> list:
        return [(c, c["winner"] or c["cache_figure"]) for m in answers["movements"] for c in m["cells"]]

    # The memcpy point the map shows at 16 MiB (a cell's winner, or its cache figure).
    point = next(x["point"] for _, x in choices_of(compute_answers(load_run(engine_run)))
                 if x and x["benchmark"] == "host.memcpy" and "|16777216|" in x["point"])
    run = _unstable(engine_run, tmp_path, {"steal_share": 0.5, "cpu_ticks": 200, "window_s": 0.05}, point=point)
    choices = choices_of(compute_answers(load_run(run)))
    cell, choice = next((c, x) for c, x in choices if x and x["point"] == point)
    assert choice["stability"] == "unstable"
    assert "hypervisor took 50%" in choice["host_witness"]
    if cell["winner"]:  # a cache figure has no winner to crown, so no map detail speaks for it
        assert "hypervisor took 50%" in map_cell(cell).detail
    # A repeatable point has no witness to give.
    assert all(x["host_witness"] is None for _, x in choices if x and x["stability"] != "unstable")


# --- real records from 2x H100 (figures-that-hold-16, call 3) ---------------------------------------

WITNESS = fixture_run("h100x2-host-witness")


def test_the_stall_on_2x_h100_is_laid_to_the_hypervisor() -> None:
    """memcpy-3: the 32-thread copies at 64 KiB - 16 MiB took 3 ms each in their own batches, with
    12-15% of the VM's CPU time stolen, and 7-57 us in their confirmation batches."""
    run = load_run(WITNESS / "memcpy-3")
    stalled = [r for r in run.results if r.benchmark == "host.memcpy" and r.point.count("threads=32")
               and r.stability == "unstable" and r.stability_modes[0] > 1e-3]
    assert {r.bytes for r in stalled} == {64 << 10, 1 << 20, 16 << 20}
    for r in stalled:
        words = host_witness(r)
        assert words.startswith("in the slower pass (the point's own batches) the hypervisor took 1"), words
        assert words.endswith("the machine's, not the tool's")


DEFAULT = fixture_run("h100x2-witness-default") / "default"


def _busy_copy(out: Path, factor: float, activity_from: Path | None) -> Path:
    """Call 5's default run with its 32-thread host.memcpy points `factor` times slower; with
    `activity_from`, their host activity is what the job with every CPU kept busy recorded for the
    same points (real readings of a busy host), else left as it was (a quiet host)."""
    def ours(r: dict) -> bool:
        return r.get("benchmark") == "host.memcpy" and "threads=32" in r.get("point", "")
    busy = {}
    if activity_from:
        for r in read_lines(activity_from / "results.jsonl"):
            if ours(r) and r["type"] == "result":
                busy[(r["bytes"], "result")] = r["timing"]["host_activity"]
            elif ours(r) and r["type"] == "stability":
                busy[(r["bytes"], "stability")] = r["stability"].get("host_activity")
    lines = []
    for r in read_lines(DEFAULT / "results.jsonl"):
        if ours(r):
            r = slowed(r, factor)
            if (r["bytes"], "result") in busy and r["type"] == "result":
                r["timing"]["host_activity"] = busy[(r["bytes"], "result")]
            elif busy.get((r["bytes"], "stability")) and r["type"] == "stability":
                r["stability"]["host_activity"] = busy[(r["bytes"], "stability")]
        lines.append(r)
    out.mkdir(parents=True)
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return out


def test_compare_lays_a_move_under_a_busy_host_to_the_machine(tmp_path: Path, narrow_compare_rule) -> None:
    """A default run against itself with its 32-thread copies 4x as slow: where their records
    carry what the busy job's host showed (other processes on 68-100% of the node), compare calls
    them unstable and says why; where the host stayed quiet, they have changed. (Against itself,
    every other point moved 0, so the planted copies set their ranges' tolerances themselves: the
    narrower rule calls five of the seven changed, compare's own three.)"""
    def moved(c) -> list:
        return [p for p in c.points if p.benchmark == "host.memcpy" and "threads=32" in p.variant]

    [quiet] = compare_runs([DEFAULT, _busy_copy(tmp_path / "quiet", 4.0, None)])
    changed = [p for p in moved(quiet) if p.verdict.different]
    assert len(changed) >= 4 and all(p.improvement < 1 for p in changed), [p.verdict.why for p in moved(quiet)]
    assert not [p for p in quiet.points if "host got in the way" in p.verdict.why]
    [busy] = compare_runs([DEFAULT, _busy_copy(tmp_path / "busy", 4.0, WITNESS / "hog-1")])
    laid = [p for p in moved(busy) if "worse in the other run, where the host got in the way: in its own batches "
            "other processes used" in p.verdict.why]
    assert len(laid) >= 2 and all(p.verdict.unstable and not p.verdict.different for p in laid), \
        [p.verdict.why for p in moved(busy)]
    # The others stay changed: at their sizes the busy job's passes were too short for shares.
    records = {(r.benchmark, r.bytes): r for r in load_run(tmp_path / "busy").results if "threads=32" in r.point}
    for p in moved(busy):
        if p.key in {q.key for q in changed} and p not in laid:
            assert p.verdict.different and interference(records[(p.benchmark, p.size)]) is None, p.verdict.why
    # The other way round the busy run is the faster one: its host cannot explain the other's slowness.
    [reverse] = compare_runs([_busy_copy(tmp_path / "busy-base", 0.25, WITNESS / "hog-1"), DEFAULT])
    assert {p.key for p in moved(reverse) if p.verdict.different} == {p.key for p in changed}


def test_the_harness_check_says_when_the_host_got_in_the_way() -> None:
    """Harness against bare loop on the same real jobs: where a pass of either loop ran while the
    hypervisor stole 12-19% of the VM (memcpy-3) or other processes held the node (hog-1), the
    miss is the host's, said with what it did; the quiet job's misses stay "one pass"."""
    from commatlas.analysis.agreement import Kind
    from commatlas.analysis.harness_check import harness_check

    stalled = harness_check(load_run(WITNESS / "memcpy-3"))
    host = [p for p in stalled.pairs if p.verdict.kind is Kind.HOST]
    assert {p.bytes for p in host} == {1 << 20, 16 << 20, 256 << 20}
    assert all("the hypervisor took 1" in p.verdict.text and not p.agree for p in host)
    assert "at 3 the host got in the way (at 1 MiB: host.memcpy in its own batches the hypervisor took" \
        in stalled.verdict()
    busy = harness_check(load_run(WITNESS / "hog-1"))
    assert [p for p in busy.pairs if p.verdict.kind is Kind.HOST]
    assert all("other processes used" in p.verdict.text for p in busy.pairs if p.verdict.kind is Kind.HOST)
    quiet = harness_check(load_run(WITNESS / "memcpy-1"))
    assert not [p for p in quiet.pairs if p.verdict.kind is Kind.HOST]
    assert [p for p in quiet.pairs if p.verdict.kind is Kind.ONE_PASS]


# 4x H200, a real default run: host.memcpy over all 64 vCPUs waited on the hypervisor in both passes
# of every point (3.0 ms a copy from 16 B to 16 MiB), while one thread saw no steal.
BUSY = fixture_run("h200x4-host-busy")
KiB, MiB = 1 << 10, 1 << 20


def _host_copy_cell(run_dir: Path, size: int) -> dict:
    answers = compute_answers(load_run(run_dir))
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "schema" / "answers.schema.json").read_text())
    problems = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(answers)]
    assert not problems, problems[:3]
    return next(c for m in answers["movements"] if m["label"] == "CPU memory, copy" for c in m["cells"]
                if c["bytes"] == size)


def test_a_figure_the_host_got_in_the_way_of_in_every_pass_is_the_hosts() -> None:
    results = load_run(BUSY).results
    many = [r for r in results if r.benchmark == "host.memcpy" and r.params.get("threads") == 64]
    one = [r for r in results if r.benchmark == "host.memcpy" and r.params.get("threads") == 1]
    assert len(many) == len(one) == 7
    for r in many:
        words = host_busy(r) or ""
        assert words.startswith("in its own batches the hypervisor took ") and \
            "; in its confirmation batch the hypervisor took " in words, (r.bytes, words)
    # Its passes agreed on the machine's state at 3.0 ms a copy: repeatable, and still the host's.
    assert {r.bytes for r in many if r.stability == "repeatable"} >= {16, 4 * KiB, 64 * KiB, 256 * MiB}
    assert not [r for r in one if host_busy(r)]


def test_the_map_crowns_no_figure_the_host_got_in_the_way_of() -> None:
    cell = _host_copy_cell(BUSY, 256 * MiB)
    # The 64-thread copy is still the fastest figure there (51.9 GB/s against one thread's 9.6)...
    assert cell["winner"]["benchmark"] == "host.memcpy" and cell["winner"]["choices"]["threads"] == "64"
    # ...but the passes agreed on the hypervisor's state, so nothing is crowned.
    assert cell["host_busy"] == ["cpu_memcpy"] and cell["clear"] is False
    assert "the hypervisor took 30%" in cell["winner"]["host_busy"]
    shown = map_cell(cell)
    assert shown is not None and shown.busy and shown.name == "memcpy (host busy)"
    assert "the host got in the way of every pass of memcpy (in its own batches the hypervisor took 30%" in shown.detail
    assert "no winner is claimed here" in shown.detail


def test_one_quiet_pass_leaves_the_figure_the_mechanisms(tmp_path: Path) -> None:
    """The same records with the confirmation batch of the 256 MiB point as quiet as a one-thread
    copy's: the host got in the way of one pass only, so the figure is not the host's."""
    records = read_lines(BUSY / "results.jsonl")
    point = next(r["point"] for r in records if r.get("type") == "result" and r["benchmark"] == "host.memcpy"
                 and r["params"]["threads"] == 64 and r["bytes"] == 256 * MiB)
    quiet = next(r for r in records if r.get("type") == "result" and r["benchmark"] == "host.memcpy"
                 and r["params"]["threads"] == 1 and r["bytes"] == 256 * MiB)["timing"]["host_activity"]
    for r in records:
        if r.get("type") == "stability" and r["point"] == point:
            r["stability"]["host_activity"] = quiet
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    cell = _host_copy_cell(tmp_path, 256 * MiB)
    assert cell["host_busy"] == [] and cell["winner"]["host_busy"] is None
    shown = map_cell(cell)
    assert shown is not None and not shown.busy and shown.name == "memcpy"


def test_compare_cannot_call_a_winner_change_against_a_figure_the_host_got_in_the_way_of(tmp_path: Path) -> None:
    """The same run with the one-thread copy at 256 MiB made 8x faster, so it beats the 64-thread
    copy (51.9 GB/s) that the hypervisor held in both passes: the host copy cell's winner changes,
    and compare says it cannot tell, naming the busy host (without the rule it reads the change as
    a tie against the held copy's own spread)."""
    records = read_lines(BUSY / "results.jsonl")
    point = next(r["point"] for r in records if r.get("type") == "result" and r["benchmark"] == "host.memcpy"
                 and r["params"]["threads"] == 1 and r["bytes"] == 256 * MiB)
    for r in records:
        if r.get("point") == point:  # its result and its stability record
            slowed(r, 1 / 8)
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    [c] = compare_runs([BUSY, tmp_path])
    [change] = [w for w in c.winners if w.movement == "CPU memory, copy"]
    assert "threads=64" in change.base and "threads=1" in change.other
    assert not change.beyond_noise and "held by a busy host" in change.why, change.why
