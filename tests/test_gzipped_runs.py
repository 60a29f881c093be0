"""A run kept gzipped (results/ stores every large run as results.jsonl.gz) reads as the same run:
`commatlas report`, `compare` and every reader open RUN/results.jsonl.gz where RUN/results.jsonl
is not there; a damaged one is one line and exit status 2."""

from __future__ import annotations

import gzip
from pathlib import Path

from conftest import FIXTURES, assert_one_line_error, run_cli

from commatlas.io.records import read_records
from commatlas.io.results import load_run

RUN = FIXTURES / "report" / "gpu_like"  # a stored run with a plain results.jsonl


def gzipped_copy(tmp_path: Path) -> Path:
    run = tmp_path / "packed"
    run.mkdir()
    (run / "results.jsonl.gz").write_bytes(gzip.compress((RUN / "results.jsonl").read_bytes()))
    return run


def test_a_gzipped_run_reads_as_the_plain_one(tmp_path: Path) -> None:
    run = gzipped_copy(tmp_path)
    plain, packed = load_run(RUN), load_run(run)
    assert packed.path == run / "results.jsonl.gz"
    assert len(packed.results) == len(plain.results) > 0
    assert [(r.benchmark, r.bandwidth_gbps, r.latency_us) for r in packed.results] == \
        [(r.benchmark, r.bandwidth_gbps, r.latency_us) for r in plain.results]
    assert read_records(packed.path) == read_records(plain.path)


def test_report_and_compare_open_a_gzipped_run(tmp_path: Path) -> None:
    run = gzipped_copy(tmp_path)
    done = run_cli("report", str(run))
    assert done.returncode == 0, done.stderr
    assert (run / "report.html").is_file()
    done = run_cli("compare", str(RUN), str(run), "--html", str(tmp_path / "compare.html"))
    assert done.returncode == 0, done.stderr
    assert "changed beyond run-to-run variation" in done.stdout


def test_a_damaged_gzipped_run_is_one_line(tmp_path: Path) -> None:
    run = gzipped_copy(tmp_path)
    packed = run / "results.jsonl.gz"
    packed.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])  # cut short
    done = run_cli("report", str(run))
    assert_one_line_error(done)
    assert "results.jsonl.gz" in done.stderr and "cannot read" in done.stderr
