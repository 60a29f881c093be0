"""The results reader: typed records, truncated files, corrupt and foreign files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from commatlas.io.results import ResultsError, group_series, load_run
from conftest import fixture_run

H200X2 = fixture_run("h200x2-atlas-2gpu") / "default"


def lines_of(path: Path) -> list[str]:
    return (path / "results.jsonl").read_text().splitlines(keepends=True)


def write_run(tmp_path: Path, lines: list[str]) -> Path:
    (tmp_path / "results.jsonl").write_text("".join(lines))
    return tmp_path


def test_reads_every_record_type_into_typed_fields():
    run = load_run(H200X2)
    assert run.meta["run_id"] and run.complete and run.end.results == len(run.results)
    assert run.skips and all(s.movement is not None for s in run.skips)
    r = next(r for r in run.results if r.benchmark == "nccl.allreduce")
    assert r.collective.operation == "allreduce" and r.collective.bus_factor == pytest.approx(1.0)
    assert r.movement.operation == "allreduce" and r.movement.mechanism == "nccl"
    assert r.movement.source.rank is None and r.movement.source.memory == "gpu"
    assert r.stats.p5_s <= r.stats.median_s <= r.stats.p95_s
    assert r.samples.shape == (r.timing.samples,) and np.all(r.samples > 0)  # 8 samples of 4 GiB
    h2d = next(r for r in run.results if r.benchmark == "gpu.copy_ce" and r.params.get("path") == "h2d"
               and r.params.get("host_allocator") == "pinned")
    assert (h2d.movement.source.memory, h2d.movement.source.allocator, h2d.movement.target.gpu) == ("host", "pinned", 0)
    cached = next(r for r in run.results if r.movement.cache_resident)
    assert cached.peak.unknown.startswith("cache-resident") and np.isnan(cached.peak.gbps)
    assert run.undeclared == 0 and not run.notes


def test_samples_parse_lazily_to_the_numbers_written():
    first = json.loads(lines_of(H200X2)[1])
    run = load_run(H200X2)
    assert run.results[0].samples.tolist() == first["samples_s"]


def test_truncated_last_line_keeps_the_whole_records_and_says_so(tmp_path):
    lines = lines_of(H200X2)
    cut = lines[:50] + [lines[50][: len(lines[50]) // 2]]  # the writer died mid-record
    run = load_run(write_run(tmp_path, cut))
    assert len(run.results) == 49  # line 1 is meta
    assert any("line 51 is truncated" in n for n in run.notes)
    assert run.end is None and not run.complete
    assert any("no end record" in n for n in run.notes)


def test_corrupt_line_costs_its_record_and_is_named_once(tmp_path, capsys):
    lines = lines_of(H200X2)
    lines[9] = lines[9].replace("\"params\":", "\"params\"::", 1)
    path = write_run(tmp_path, lines)
    run = load_run(path)
    assert len(run.results) == len(load_run(H200X2).results) - 1 and run.end is not None
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and f"{path / 'results.jsonl'}: 1 line is not valid JSON (line 10)" in warning[0]
    assert any("line 10" in n for n in run.notes)


def test_a_file_of_no_json_at_all_is_refused_naming_its_first_line(tmp_path):
    with pytest.raises(ResultsError, match=r"holds no commatlas records \(line 1 is not valid JSON"):
        load_run(write_run(tmp_path, ["hello\n", "world\n"]))


def test_record_missing_a_field_names_its_line(tmp_path):
    lines = lines_of(H200X2)
    record = json.loads(lines[3])
    del record["stats"]
    lines[3] = json.dumps(record) + "\n"
    with pytest.raises(ResultsError, match=r":4: malformed result record"):
        load_run(write_run(tmp_path, lines))


def test_foreign_json_is_rejected(tmp_path):
    with pytest.raises(ResultsError, match=r"results.jsonl:1: not a commatlas record"):
        load_run(write_run(tmp_path, ['{"name": "something else", "value": 3}\n']))
    with pytest.raises(ResultsError, match=r"results.jsonl:1: not a commatlas record"):
        load_run(write_run(tmp_path, ["[1, 2, 3]\n"]))


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(ResultsError, match="no such results file"):
        load_run(tmp_path / "nothing")
    with pytest.raises(ResultsError, match="holds no commatlas records"):
        load_run(write_run(tmp_path, []))


def test_series_group_by_benchmark_and_params_sorted_by_size():
    series, notes = group_series(load_run(H200X2).results)
    assert not notes
    ce = [s for s in series if s.benchmark == "gpu.copy_ce_matrix"]
    assert ce and all(list(s.sizes) == sorted(s.sizes) for s in ce)


def test_precision_is_read_when_the_harness_writes_it(tmp_path):
    lines = lines_of(H200X2)
    record = json.loads(lines[1])
    record["timing"]["precision"] = {"target": 0.01, "reached": 0.03, "stopped": "time budget"}
    lines[1] = json.dumps(record) + "\n"
    p = load_run(write_run(tmp_path, lines)).results[0].timing.precision
    assert (p.target, p.reached, p.stopped, p.met) == (0.01, 0.03, "time budget", False)
