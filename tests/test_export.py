"""export: one row per result, flattened parameters, statistics, peak and bus bandwidth."""
from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from commatlas.io.results import load_run
from commatlas.report.export import export_csv

GPU_LIKE = Path(__file__).parent / "fixtures" / "report" / "gpu_like"
HOST = Path(__file__).parent / "fixtures" / "report" / "host"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = export_csv(GPU_LIKE, tmp_path_factory.mktemp("csv") / "r.csv")
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def test_one_row_per_result(rows):
    assert len(rows) == len(load_run(GPU_LIKE).results) == 141


def test_columns_flatten_params_stats_peak_and_busbw(rows):
    header = rows[0].keys()
    for col in ("param.src", "param.dst", "param.threads", "param.src_allocator", "median_s", "p95_s", "cv",
                "bandwidth_gbps", "latency_us", "peak_fraction", "busbw_gbps", "verified_ok"):
        assert col in header
    ce = next(r for r in rows if r["benchmark"] == "gpu.ce_copy" and r["param.src"] == "0" and r["param.dst"] == "1"
              and r["bytes"] == str(256 * 1024 * 1024))
    assert float(ce["bandwidth_gbps"]) == pytest.approx(float(ce["bytes_per_op"]) / float(ce["median_s"]) / 1e9)
    assert float(ce["peak_fraction"]) == pytest.approx(float(ce["bandwidth_gbps"]) / float(ce["peak_gbps"]))
    assert ce["param.threads"] == "" and ce["busbw_gbps"] == ""
    coll = next(r for r in rows if r["benchmark"] == "coll.nccl_allreduce")
    assert float(coll["busbw_gbps"]) == pytest.approx(1.5 * float(coll["algbw_gbps"]))


def test_cli_export_to_stdout(tmp_path):
    out = subprocess.run([sys.executable, "-m", "commatlas", "export", str(GPU_LIKE), "--out", "-"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(list(csv.DictReader(io.StringIO(out.stdout)))) == 141
    # CSV is the only format: a flag that chose it would do nothing, so there is none.
    refused = subprocess.run([sys.executable, "-m", "commatlas", "export", str(GPU_LIKE), "--csv", "--out", "-"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--csv" in refused.stderr and not refused.stdout


def test_unknown_peaks_are_blank_like_every_missing_field(tmp_path):
    # The host fixture's peaks are unknown (no memory peak readable on that VM).
    out = export_csv(HOST, tmp_path / "host.csv")
    with open(out, newline="") as f:
        host_rows = list(csv.DictReader(f))
    assert host_rows and all(r["peak_gbps"] == "" and r["peak_fraction"] == "" for r in host_rows)
    assert "nan" not in out.read_text().lower()
