"""The tuning answer and the --tune presets, on a real `--tune mpi` run of the host engine (4 ranks,
one pattern, one size): the answer names a best setting (or the default) per movement and size,
flags what slowed or broke, and renders; a preset that would run for hours is refused first."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from conftest import assert_one_line_error, assert_valid_run, fixture_run, have_mpiexec, run_cli

from commatlas.analysis.tuning import tuning_answers
from commatlas.io.records import read_records
from commatlas.io.results import load_run
from commatlas.report.render import render_tuning_html
from commatlas.report.summary import print_summary
from commatlas.run.presets import glibc_preset, mpi_knobs, nccl_preset, ompi_components


@pytest.fixture(scope="module")
def tune_run(engine_info, engine_benchmarks, tmp_path_factory, validator) -> Path:
    if not engine_info["backends"].get("mpi", {}).get("built") or not have_mpiexec():
        pytest.skip("needs the MPI backend and mpiexec")
    if not any(b["key"] == "pattern.halo2d.mpi" for b in engine_benchmarks):
        pytest.skip("this engine has no host-MPI patterns")
    out = tmp_path_factory.mktemp("tune") / "run"
    done = run_cli("run", "--tune", "mpi", "--only", "pattern.halo2d.mpi", "--sizes", "4K", "--quick", "--ranks", "4",
                   "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "passes" in done.stderr and "(estimate)" in done.stderr, "the duration is said before it starts"
    assert_valid_run(out / "results.jsonl", validator)
    return out


def test_preset_run_answers_per_movement_and_size(tune_run: Path) -> None:
    run = load_run(tune_run)
    answer = tuning_answers(run)
    assert answer["format"] == "commatlas-tuning/1"
    assert answer["baseline"] == "every swept variable unset"
    assert "OMPI_MCA_btl" in answer["variables"]
    # One answer per movement and size range, or the points left out of it: on the 2-core VM four
    # ranks' halo points often do not repeat their own batches.
    assert answer["answers"] or answer["left_out"], "one answer per movement and size range"
    for x in answer["left_out"]:
        assert x["benchmark"] == "pattern.halo2d.mpi" and x["bytes"] == 4096 and "not judged" in x["text"]
    for a in answer["answers"]:
        assert a["benchmark"] == "pattern.halo2d.mpi" and a["ranks"] == 4
        assert a["text"].startswith("for pattern.halo2d.mpi")
        assert (a["setting"] is None) == (a["gain"] is None)
    # The preset changes one knob per pass: every record names every knob, the others unset.
    for r in run.results:
        env = {k: v for k, v in r.params.items() if k.startswith("env.")}
        assert sum(v != "(unset)" for v in env.values()) <= 1
    json.dumps(answer)  # goes into answers.json as it is


def test_a_slower_setting_is_flagged_and_a_faster_one_wins(tune_run: Path) -> None:
    run = load_run(tune_run)
    # The same run, with one setting's point made 3x slower and another's 2x faster than the default,
    # and every other setting as fast as the default: measured, 4 ranks on this 2-core VM have put
    # a setting that changes nothing (OMPI_MCA_pml=ob1) more than 2x from the default's figure.
    changed = copy.deepcopy(run)
    settings = [r for r in changed.results if any(v != "(unset)" for k, v in r.params.items() if k.startswith("env."))]
    slow, fast = settings[:2]
    base = next(r for r in changed.results if all(v == "(unset)" for k, v in r.params.items() if k.startswith("env.")))
    # Figures that held: a point that did not repeat, or that the host was busy for, is left out.
    for r in settings:
        factor = 3.0 if r is slow else 0.5 if r is fast else 1.0
        r.stats = type(r.stats)(**{**r.stats.__dict__, "median_s": base.stats.median_s * factor, "cv": 0.0})
        r.stability, r.pass_activity = "repeatable", ()
    base.stats = type(base.stats)(**{**base.stats.__dict__, "cv": 0.0})
    base.stability, base.pass_activity = "repeatable", ()
    answer = tuning_answers(changed)
    slow_setting = {k[4:]: v for k, v in slow.params.items() if k.startswith("env.") and v != "(unset)"}
    fast_setting = {k[4:]: v for k, v in fast.params.items() if k.startswith("env.") and v != "(unset)"}
    assert any(s["setting"] == slow_setting and s["gain"] == pytest.approx(1 / 3, rel=1e-3) for s in answer["slowed"])
    best = answer["answers"][0]
    assert best["setting"] == fast_setting and best["gain"] == pytest.approx(2.0, rel=1e-3)
    assert "2.00x faster than the default" in best["text"]
    html = render_tuning_html(answer)
    assert "Tuning: best setting" in html and "slowed" in html


def test_a_run_without_sweeps_has_no_tuning_answer(tune_run: Path) -> None:
    run = load_run(tune_run)
    plain = copy.deepcopy(run)
    for r in plain.results:
        r.params = {k: v for k, v in r.params.items() if not k.startswith("env.")}
    plain.meta = None
    answer = tuning_answers(plain)
    assert answer["answers"] == [] and not answer["variables"]
    assert render_tuning_html(answer).strip() == ""


def test_mpi_knobs_follow_what_ompi_info_reports() -> None:
    text = "\n".join(["mca:btl:self:version:mca:2.1.0", "mca:btl:vader:version:mca:2.1.0",
                      "mca:btl:tcp:version:mca:2.1.0", "mca:pml:ob1:version:mca:2.1.0"])
    assert ompi_components(text) == {"btl": {"self", "vader", "tcp"}, "pml": {"ob1"}}
    knobs = {k.name: k.values for k in mpi_knobs("openmpi", text)}
    assert knobs == {"OMPI_MCA_btl": ("self,vader", "self,tcp")}, "one pml: nothing to choose"
    with_ucx = text + "\nmca:pml:ucx:version:mca:2.1.0"
    assert {k.name: k.values for k in mpi_knobs("openmpi", with_ucx)}["OMPI_MCA_pml"] == ("ob1", "ucx")
    assert mpi_knobs("unknown") == ()


def test_nccl_preset_runs_each_knob_alone() -> None:
    preset = nccl_preset()
    names = {k.name for k in preset.knobs}
    assert {"NCCL_PROTO", "NCCL_ALGO", "NCCL_P2P_LEVEL"} <= names
    assert names & {"NCCL_NCHANNELS_PER_PEER", "NCCL_MIN_NCHANNELS"}
    passes = preset.passes()
    assert len(passes) == 1 + sum(len(k.values) for k in preset.knobs)
    assert all(v == "(unset)" for _, v in passes[0].env)


def test_list_tune_shows_each_preset_and_its_values() -> None:
    done = run_cli("list", "--tune", "--json")
    assert done.returncode == 0, done.stderr
    table = {p["preset"]: p for p in json.loads(done.stdout)}
    assert set(table) == {"nccl", "mpi", "glibc"}
    proto = next(k for k in table["nccl"]["knobs"] if k["name"] == "NCCL_PROTO")
    assert proto["values"][0] == "(unset)" and "LL" in proto["values"]


def test_a_preset_of_hours_is_refused_before_it_starts(engine_info, engine_benchmarks, tmp_path: Path) -> None:
    if not any(b["key"] == "pattern.halo2d.mpi" for b in engine_benchmarks) or not have_mpiexec():
        pytest.skip("needs the host-MPI patterns and mpiexec")
    done = run_cli("run", "--tune", "mpi", "--sizes", "1:1G", "--time-budget", "100", "--ranks", "2",
                   "--out", str(tmp_path / "run"))
    assert_one_line_error(done)
    assert "would run for about" in done.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists() or not (tmp_path / "run" / "results.jsonl").read_text()


def test_tune_with_sweep_env_is_refused() -> None:
    done = run_cli("run", "--tune", "mpi", "--sweep-env", "A=1,2")
    assert_one_line_error(done)


def test_a_setting_that_takes_a_variant_off_its_route_is_one_entry_per_message() -> None:
    # Real `--tune nccl` records of 4x H100 (tests/fixtures/h100x4-errors): NCCL_P2P_LEVEL=LOC sent
    # send/recv through host memory; its wire check failed at 256 MiB and the four smaller sizes were
    # not measured. Five error records, two causes: the failed check and the sizes it left.
    answer = tuning_answers(load_run(fixture_run("h100x4-errors") / "call2-tune"))
    broke = answer["broke"]
    assert [b["setting"] for b in broke] == [{"NCCL_P2P_LEVEL": "LOC"}] * 2
    assert [b["sizes"] for b in broke] == [[256 << 20], [16 << 20, 1 << 20, 64 << 10, 8]]
    assert [b["bytes"] for b in broke] == [256 << 20, 16 << 20]
    assert broke[0]["text"].startswith("NCCL_P2P_LEVEL=LOC broke nccl.bandwidth at 256 MiB: wire check failed: "
                                       "the bytes crossed PCIe"), broke[0]["text"]
    assert " at 8 B, 64 KiB, 1 MiB, 16 MiB: " in broke[1]["text"], broke[1]["text"]
    assert "no setting beat the default" in " ".join(a["text"] for a in answer["answers"])


# Real records of 1x H200 (tests/fixtures/h200-glibc-tunables): host.memcpy on one thread under three
# GLIBC_TUNABLES settings, one job per setting and then three.
def _medians(run, nbytes: int, value: str) -> list[float]:
    return sorted(r.stats.median_s for r in run.results
                  if r.bytes == nbytes and r.params.get("env.GLIBC_TUNABLES") == value)


NON_TEMPORAL = "glibc.cpu.x86_non_temporal_threshold=0xffffffffff"
REP_MOVSB = "glibc.cpu.x86_rep_movsb_threshold=0xffffffff"


def test_one_job_per_setting_says_so_and_leaves_out_a_figure_that_did_not_repeat() -> None:
    run = load_run(fixture_run("h200-glibc-tunables") / "one-job")
    unstable = [r for r in run.results if r.stability == "unstable"]
    assert [(r.bytes, r.params["env.GLIBC_TUNABLES"]) for r in unstable] == [(16 << 20, REP_MOVSB)]
    answer = tuning_answers(run)
    assert "job-to-job spread" in answer["caveat"] and "--repeat" in answer["caveat"]
    assert [(x["bytes"], x["setting"]) for x in answer["left_out"]] == [(16 << 20, {"GLIBC_TUNABLES": REP_MOVSB})]
    assert "did not repeat" in answer["left_out"][0]["text"]
    html = render_tuning_html(answer)
    assert "Points left out" in html and "divided by the setting's. One job per setting" in html


def test_jobs_of_one_setting_that_spread_wider_than_a_gain_claim_none() -> None:
    run = load_run(fixture_run("h200-glibc-tunables") / "three-jobs")
    # At 1 MiB the non-temporal setting's median job is 1.48x the default's, but the default's own
    # three jobs lie 1.75x apart: a job draws its state.
    default, setting = _medians(run, 1 << 20, "(unset)"), _medians(run, 1 << 20, NON_TEMPORAL)
    assert default[1] / setting[1] > 1.4 and default[-1] / default[0] > 1.7
    answer = tuning_answers(run)
    assert answer["caveat"] == ""
    assert all(a["setting"] is None for a in answer["answers"]), [a["text"] for a in answer["answers"]]
    # Every job of both sides agrees at 256 MiB: that slowdown stands.
    slowed = [s for s in answer["slowed"] if s["setting"] == {"GLIBC_TUNABLES": NON_TEMPORAL}]
    assert [(s["min_bytes"], s["max_bytes"]) for s in slowed] == [(256 << 20, 256 << 20)]
    assert slowed[0]["gain"] == pytest.approx(0.68, abs=0.03)


def test_the_glibc_preset_moves_memcpys_thresholds_where_glibc_has_them() -> None:
    preset = glibc_preset("x86_64", "glibc")
    (knob,) = preset.knobs
    assert knob.name == "GLIBC_TUNABLES" and preset.only == ("host.memcpy",)
    # The two settings session 32 measured by hand, and non-temporal stores from 1 MiB.
    assert NON_TEMPORAL in knob.values and REP_MOVSB in knob.values
    assert len(preset.passes()) == 1 + len(knob.values)
    # Elsewhere the tunables do not exist: the preset is refused with why, before anything runs.
    for machine, libc in (("aarch64", "glibc"), ("x86_64", "")):
        other = glibc_preset(machine, libc)
        assert other.knobs == () and "x86-64 glibc's" in other.note


def test_a_tuning_run_answers_first_on_the_terminal() -> None:
    """The 1x H200 run of three jobs a setting (session 32): the terminal shows what was swept and
    the one effect that held before the map, at 80 columns, each setting whole on a line."""
    run = load_run(fixture_run("h200-glibc-tunables") / "three-jobs")
    out = io.StringIO()
    print_summary(Console(file=out, width=80, color_system=None), read_records(run.path))
    text = out.getvalue()
    assert text.index("Tuning (GLIBC_TUNABLES, 3 settings)") < text.index("Best interface per movement")
    lines = text.splitlines()
    # The head wraps at the terminal's width, not at the (narrower) table's.
    head = next(line for line in lines if line.startswith("Tuning"))
    assert len(head.rstrip()) > 72, head
    slower = next(i for i, line in enumerate(lines) if line.startswith("1.46× slower"))
    assert "host.memcpy at 256 MiB" in lines[slower]
    assert lines[slower + 1].strip() == NON_TEMPORAL
    assert any(line.startswith("none beat the default  host.memcpy at 16 KiB–256 MiB") for line in lines)
    assert all(len(line) <= 80 for line in lines)
    # A run that swept nothing says nothing of tuning.
    plain = io.StringIO()
    print_summary(Console(file=plain, width=80, color_system=None),
                  read_records(fixture_run("h200x2-osu-copy-level") / "job-3" / "results.jsonl"))
    assert "Tuning" not in plain.getvalue() and "Best interface per movement" in plain.getvalue()


def test_a_setting_that_left_no_record_is_said_of_the_whole_run() -> None:
    """The meta record names a setting no record carries: its pass failed as a whole."""
    run = load_run(fixture_run("h200-glibc-tunables") / "one-job")
    kept = [r for r in read_records(run.path) if r.get("params", {}).get("env.GLIBC_TUNABLES") != REP_MOVSB]
    out = io.StringIO()
    print_summary(Console(file=out, width=80, color_system=None), kept)
    lines = out.getvalue().splitlines()
    broke = next(i for i, line in enumerate(lines) if line.startswith("broke"))
    assert lines[broke].rstrip().split("  ")[-1].strip() == "the whole run" and lines[broke + 1].strip() == REP_MOVSB


def test_two_jobs_a_side_are_judged_by_the_median_between_them() -> None:
    """1x H200, three jobs a setting, one of them unstable at 1 MiB: two settled jobs of
    non-temporal stores off read 24.0 and 17.9 GB/s against the default's 24.9-29.6. The median of
    two lies between them; the slower one alone made it "1.48x slower", past their own 1.34x spread."""
    run = load_run(fixture_run("h200-tune-glibc"))
    answer = tuning_answers(run)
    at_1mib = [s for s in answer["slowed"] if s["min_bytes"] <= 1 << 20 <= s["max_bytes"]
               and s["setting"] == {"GLIBC_TUNABLES": NON_TEMPORAL}]
    assert at_1mib == [], [s["text"] for s in at_1mib]
    # What holds over every job: non-temporal stores off, 256 MiB 1.53x slower; from 1 MiB, 16 MiB faster.
    (slowed,) = [s for s in answer["slowed"] if s["setting"] == {"GLIBC_TUNABLES": NON_TEMPORAL}]
    assert (slowed["min_bytes"], slowed["gain"]) == (256 << 20, pytest.approx(0.654, abs=0.01))
    (won,) = [a for a in answer["answers"] if a["setting"]]
    assert won["setting"] == {"GLIBC_TUNABLES": "glibc.cpu.x86_non_temporal_threshold=0x100000"}
    assert (won["min_bytes"], won["max_bytes"], won["params"]["threads"]) == (16 << 20, 16 << 20, "1")


def test_an_unsettled_jobs_state_widens_its_sides_spread() -> None:
    """2x H200 under the CUDA-aware Open MPI, three jobs a BTL setting. Its shared-memory transport
    for host buffers is smcuda; self,vader moves small messages 2-3x faster. At 1 MiB a default job
    whose batches did not repeat read 10.96 GB/s, the settled ones 13.0 and 14.2, and self,vader
    10.4-12.0: the unsettled job's figure is not compared, but its state counts in the spread, so
    no slowdown is claimed there."""
    run = load_run(fixture_run("h200x2-tune-mpi"))
    answer = tuning_answers(run)
    won = {(a["benchmark"], a["min_bytes"]): (a["setting"], a["gain"]) for a in answer["answers"] if a["setting"]}
    vader = {"OMPI_MCA_btl": "self,vader"}
    assert won == {("mpi.bandwidth", 8): (vader, pytest.approx(3.22, abs=0.05)),
                   ("mpi.bibw", 8): (vader, pytest.approx(2.70, abs=0.05)),
                   ("mpi.pingpong", 8): (vader, pytest.approx(2.01, abs=0.05))}
    slowed = {(s["benchmark"], s["min_bytes"], s["setting"]["OMPI_MCA_btl"]) for s in answer["slowed"]}
    assert ("mpi.bandwidth", 1 << 20, "self,vader") not in slowed
    # TCP loopback is slower everywhere, and said so.
    assert {b for b, _, setting in slowed if setting == "self,tcp"} == {"mpi.bandwidth", "mpi.bibw", "mpi.pingpong"}
