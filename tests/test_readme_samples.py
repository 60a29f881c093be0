"""The README's sample output is what the program prints now. Its `commatlas run --quick` block
(marked `<!-- sample: run ... -->`) is the terminal output of a real run whose records are kept in
docs/samples/quick/results.jsonl. From those records this test prints again what is
deterministic and compares it with the README line for line: the suite lines, the summary (map,
findings, harness line) at 80 columns, the progress and output lines' layout; measured numbers
are taken from the records, so they never need tolerating. The README's other references to the
program's formats (the `list` variants column, the figure quoted from the sample) are checked
against the code that prints them. When the output changes, rerun the sample (the README's
command) and copy it in: this test says which line differs."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from commatlas.report.summary import print_summary
from commatlas.report.views import tiers_text
from commatlas.run.execute import suite_lines
from commatlas.run.screen import folded
from commatlas.run.selection import Selection

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
SAMPLE_RUN = REPO / "docs" / "samples" / "quick" / "results.jsonl"
WIDTH = 80
PROGRESS = re.compile(r"^(single process|MPI \(\d+ ranks\)|OSU method) +━+ \d+/\d+ \d+:\d\d:\d\d eta \d+:\d\d:\d\d \S.*$")


def sample_block(name: str) -> list[str]:
    """The lines of the fenced block after `<!-- sample: NAME ... -->`."""
    text = README.read_text(encoding="utf-8")
    marker = re.search(rf"<!-- sample: {re.escape(name)}\b[^>]*-->\n+```[a-z]*\n(.*?)\n```", text, re.S)
    assert marker, f"README.md has no block marked <!-- sample: {name} -->"
    return marker.group(1).split("\n")


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_RUN.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def block() -> list[str]:
    return sample_block("run")


def test_the_command_is_the_one_that_made_the_records(block, records) -> None:
    assert block[0].startswith("$ commatlas "), block[0]
    assert shlex.split(block[0][2:])[1:] == records[0]["command_line"][1:]


def test_suite_lines_are_what_the_run_prints_for_that_machine(block, records) -> None:
    meta = records[0]
    ran = {(r["benchmark"], r["suite"]) for r in records if r.get("type") in ("result", "skip", "error")}
    running = [{"key": key, "suite": suite, "runnable": True} for key, suite in sorted(ran)]
    options = meta["options"]
    request = Selection(options["suites"] and tuple(options["suites"]), tuple(options["only"] or ()),
                        tuple(options["exclude"] or ()))
    expected = [line for text in suite_lines(request, running, running, meta["engine"], meta["topology"],
                                             meta["launcher"], "")
                for line in folded(text, WIDTH)]
    assert block[1:1 + len(expected)] == expected


def test_summary_is_what_the_records_print_at_80_columns(block, records) -> None:
    out = io.StringIO()
    print_summary(Console(file=out, width=WIDTH, color_system=None), records)
    summary = [line.rstrip() for line in out.getvalue().rstrip("\n").split("\n")]  # README keeps no trailing spaces
    start = block.index(summary[0]) if summary[0] in block else None
    assert start is not None, f"the summary's first line is not in the README's sample: {summary[0]!r}"
    assert block[start:start + len(summary)] == summary
    # Before it, the suite lines and one progress line per phase; after it, where things went.
    progress = [line for line in block[1:start] if PROGRESS.match(line)]
    assert progress and all(len(line) <= WIDTH for line in progress), block[1:start]
    run_dir = records[0]["options"]["out"]
    assert block[start + len(summary):] == [f"report: {run_dir}/report.html", f"results: {run_dir}/results.jsonl"]


def test_every_line_fits_80_columns(block) -> None:
    assert all(len(line) <= WIDTH for line in block[1:]), [line for line in block if len(line) > WIDTH]


def test_list_variants_format_in_the_readme_is_the_one_list_prints() -> None:
    text = README.read_text(encoding="utf-8")
    quoted = re.search(r"its variants per tier \(\"([^\"]+)\"", text)
    assert quoted, "README's `commatlas list` row no longer quotes the variants column"
    default, full = map(int, re.findall(r"\d+", quoted.group(1)))
    assert quoted.group(1) == tiers_text({"variants": {"default": default, "full": full}})


def test_cache_figure_quoted_in_the_readme_is_in_the_sample(block) -> None:
    text = README.read_text(encoding="utf-8")
    quoted = re.search(r"\(([\d.,]+ GB/s) for a (\d+ KiB) `memcpy` above", text)
    assert quoted, "README's 'Reading the numbers' no longer quotes a memcpy figure from the sample"
    figure, size = quoted.groups()
    assert any(size in line and figure in line for line in block), (figure, size)
