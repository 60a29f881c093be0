"""The host memory peak on screen: where it is unknown, the map (terminal, summary.md, report.html)
says so once, with the engine's reason, instead of an empty "% of peak" on every row. Records: a
real `--quick` run of the engine on a VM that exposes no SMBIOS tables (fixtures/report/host_quick_vm)."""
from __future__ import annotations

import io
import json

from rich.console import Console

from commatlas.report import write_report
from commatlas.report.summary import print_summary
from conftest import FIXTURES, fixture_run

VM = FIXTURES / "report" / "host_quick_vm"
H200 = fixture_run("h200x2-atlas-2gpu") / "default"
LINE = "the host memory peak is unknown: no SMBIOS tables at /sys/firmware/dmi/tables/DMI"


def records(run):
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def terminal(recs, width=200):
    out = io.StringIO()
    print_summary(Console(file=out, width=width, color_system=None), recs)
    return out.getvalue()


def test_the_engine_says_why_in_the_record():
    recs = records(VM)
    host = recs[0]["engine"]["host"]
    assert host["memory_peak"]["gbps"] is None
    assert "not readable without root" not in json.dumps(recs)
    memcpy = [r for r in recs if r.get("benchmark") == "host.memcpy" and not r["movement"]["cache_resident"]]
    assert memcpy and all(r["peak"]["unknown"].startswith("no host memory peak: no SMBIOS tables") for r in memcpy)


def test_terminal_and_summary_say_it_once(tmp_path):
    text = terminal(records(VM))
    assert text.count(LINE) == 1, text
    paths = write_report(VM, tmp_path)
    assert paths.markdown.read_text().count(LINE) == 1
    assert paths.html.read_text().count(LINE) == 1


def test_no_line_where_no_host_memory_row_lacks_its_peak():
    assert "host memory peak" not in terminal(records(H200))
