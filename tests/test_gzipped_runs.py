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


def test_the_committed_runs_keep_the_size_rule() -> None:
    """results/ travels to the GPU machines with every device call (64 MiB of working tree at
    most, the Open MPI carry included), so a large file that slips in plain costs every later call.
    Generated HTML is never committed: `commatlas report` rebuilds it from the records."""
    import subprocess
    root = Path(__file__).resolve().parent.parent
    listed = subprocess.run(["git", "ls-files", "results"], cwd=root, capture_output=True,
                            text=True)
    if listed.returncode != 0 or not listed.stdout:
        import pytest
        pytest.skip("not a git checkout with results/: " + listed.stderr.strip())
    files = [root / name for name in listed.stdout.splitlines()]
    plain_and_large = [str(f.relative_to(root)) for f in files
                       if f.is_file() and f.suffix != ".gz" and f.stat().st_size > 200_000]
    html = [str(f.relative_to(root)) for f in files if f.name.endswith((".html", ".html.gz"))]
    assert plain_and_large == [], "gzip these (results/README.md): " + ", ".join(plain_and_large)
    assert html == [], "generated HTML in results/: " + ", ".join(html)
