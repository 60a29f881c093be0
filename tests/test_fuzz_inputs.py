"""Hostile input, generated: whatever a results file holds, the reader returns records or raises
ResultsError with one line naming file and line; whatever --only/--sizes strings reach the CLI,
it exits 0 or 2 with one line, never a traceback. (The engine's own parsers are fuzzed with
libFuzzer: engine/fuzz/.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commatlas.io.results import ResultsError, load_run
from conftest import FIXTURES, run_cli

# A real host run: meta, results of several benchmarks, end. Eight lines keep examples small.
REAL = (FIXTURES / "report" / "host" / "results.jsonl").read_bytes().split(b"\n")[:8]
BASE = b"\n".join(REAL) + b"\n"
READER = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Each CLI example starts Python and the engine: few, but different every CI run.
CLI = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARGUMENT_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)


def read(data: bytes):
    """load_run on `data`; returns the run, or the ResultsError message. Anything else fails."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "results.jsonl"
        path.write_bytes(data)
        try:
            run = load_run(path)
            for result in run.results:
                result.samples  # parsed lazily: must fail the same way
            return run
        except ResultsError as e:
            message = str(e)
            assert "\n" not in message, message
            assert str(path) in message or "line" in message, message
            return message


@READER
@given(st.binary(max_size=2000))
def test_random_bytes(data: bytes) -> None:
    read(data)


@READER
@given(st.data())
def test_mutated_records(data) -> None:
    blob = bytearray(BASE)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(blob) - 1))
        action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        byte = data.draw(st.sampled_from(list(b'{}[],:"0123456789.-eEnul \n\\') + [0, 0xff]))
        if action == "replace":
            blob[at] = byte
        elif action == "delete":
            del blob[at]
        else:
            blob.insert(at, byte)
    read(bytes(blob))


@READER
@given(st.integers(1, len(BASE) - 1))
def test_truncated_file_reads_every_whole_record(cut: int) -> None:
    data = BASE[:cut]
    whole = data.count(b"\n")
    outcome = read(data)
    if whole == 0:
        return  # not one whole record: a ResultsError or, when the cut falls after a closing brace, the meta alone
    assert not isinstance(outcome, str), outcome
    got = (1 if outcome.meta else 0) + len(outcome.results) + len(outcome.skips) + len(outcome.failures)
    got += 1 if outcome.end else 0
    # A cut right after a record's closing brace leaves that record whole, without its newline.
    assert got in (whole, whole + 1)
    assert got >= whole


@CLI
@given(ARGUMENT_TEXT.filter(lambda s: not any(c in s for c in "*?[")))
def test_garbage_benchmark_filter(engine_path: Path, pattern: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        done = run_cli("run", "--only", pattern, "--quick", "--out", str(Path(directory) / "run"), timeout=60)
    assert done.returncode == 2, (pattern, done.returncode, done.stderr)
    assert_one_line(done)


@CLI
@given(ARGUMENT_TEXT)
def test_garbage_sizes(engine_path: Path, sizes: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        done = run_cli("run", "--only", "reference.harness_overhead", "--sizes", sizes, "--time-budget", "0.001",
                       "--out", str(Path(directory) / "run"), timeout=120)
    assert done.returncode in (0, 2), (sizes, done.returncode, done.stderr)
    if done.returncode == 2:
        assert_one_line(done)


def assert_one_line(done) -> None:
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("commatlas: error: "), done.stderr


def test_a_count_that_overflows_is_a_malformed_record() -> None:
    """CI's fuzzing drew `"bytes_checked":1e999`-like damage: JSON reads it as infinity, and int() of
    infinity raised OverflowError out of the reader as a traceback."""
    import re

    damaged = re.sub(rb'"bytes_checked":\d+', b'"bytes_checked":1e999', BASE, count=1)
    assert damaged != BASE, "the fixture has a bytes_checked to damage"
    message = read(damaged)
    assert isinstance(message, str) and "malformed result record" in message and "OverflowError" in message, message
