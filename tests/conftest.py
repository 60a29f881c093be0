"""Shared helpers: run the real CLI as a user would (a subprocess), find the real engine, and
build fake engines that answer with recorded JSON (for machines this one is not)."""

from __future__ import annotations

import atexit
import functools
import gzip
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCHEMA = REPO / "schema" / "results.schema.json"

# Tests interrupt runs with SIGINT as a user's Ctrl-C would. A test session started with SIGINT
# ignored (under nohup, or as a background job of a non-interactive shell) passes the ignoring on
# to every process it starts, and those runs would go on to their end; an ignored disposition is
# inherited across exec, a handler is not, so installing one here gives the children the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "commatlas", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout, check=False)


@pytest.fixture
def narrow_compare_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """compare judging by the 97.5% quantile of a range's moves, without the far-out fence, and each
    range of 8 points or more by its own: for tests whose subject is what a verdict adds to a
    changed point (witness words, a busy host, a process's copy level), on pairs cut to a few
    points or planted against themselves. There the range's tolerance is set by a handful of
    moves, the planted ones among them, and compare's own wider rule calls fewer of those points
    changed than the modifiers under test need."""
    import commatlas.analysis.compare as compare  # deliberate: as engine_path imports the package, late
    monkeypatch.setattr(compare, "RUNS_QUANTILE", 0.975)
    monkeypatch.setattr(compare, "FAR_OUT_IQR", 0.0)
    monkeypatch.setattr(compare, "RANGE_MIN_POINTS", compare.MIN_POINTS)


@pytest.fixture(scope="session")
def engine_path() -> Path:
    from commatlas.io.engine import locate_engine
    from commatlas.errors import UsageError

    try:
        return locate_engine()
    except UsageError as e:
        pytest.skip(f"no engine to test against: {e}")


@pytest.fixture(scope="session")
def engine_info(engine_path: Path) -> dict[str, Any]:
    return json.loads(subprocess.run([str(engine_path), "info", "--json"], capture_output=True, text=True,
                                     check=True).stdout)


@pytest.fixture(scope="session")
def engine_benchmarks(engine_path: Path) -> list[dict[str, Any]]:
    return json.loads(subprocess.run([str(engine_path), "list", "--json"], capture_output=True, text=True,
                                     check=True).stdout)


@pytest.fixture(scope="session")
def validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def slowed(record: dict[str, Any], factor: float) -> dict[str, Any]:
    """A result or stability record of a real run as if every operation had taken `factor` times
    as long: samples, statistics and figures, and the passes its confirmation compared (in the
    stability record and in timing.stability). Other records are returned as they are."""
    def passes(stability: Any) -> None:
        if isinstance(stability, dict):
            for key in ("passes_median_s", "first_median_s", "confirm_median_s"):
                value = stability.get(key)
                if isinstance(value, list):
                    stability[key] = [x * factor for x in value]
                elif isinstance(value, (int, float)):
                    stability[key] = value * factor

    if record.get("type") == "stability":
        passes(record.get("stability"))
    elif record.get("type") == "result":
        record["samples_s"] = [s * factor for s in record.get("samples_s", [])]
        record["stats"] = {k: (v * factor if k.endswith("_s") else v) for k, v in record["stats"].items()}
        record["latency_us"] *= factor
        if record.get("bandwidth_gbps"):
            record["bandwidth_gbps"] /= factor
        if isinstance(record.get("collective"), dict):  # a collective's algbw, busbw and goodput
            record["collective"] = {k: (v / factor if k.endswith("_gbps") and isinstance(v, (int, float)) else v)
                                    for k, v in record["collective"].items()}
        passes((record.get("timing") or {}).get("stability"))
    return record


def assert_valid_run(results: Path, validator) -> list[dict[str, Any]]:
    records = read_lines(results)
    for number, record in enumerate(records, 1):
        problems = [e.message for e in validator.iter_errors(record)]
        assert not problems, f"line {number} ({record.get('type')}): {problems[:3]}"
    assert records[0]["type"] == "meta"
    assert records[-1]["type"] == "end"
    assert [r["type"] for r in records].count("meta") == 1
    assert [r["type"] for r in records].count("end") == 1
    return records


def assert_one_line_error(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("commatlas: error: "), lines[0]


def write_fake_engine(directory: Path, info: dict[str, Any], benchmarks: list[dict[str, Any]],
                      topology: dict[str, Any] | None) -> Path:
    """An executable standing in for commatlas-engine: answers info/list/topo from JSON; its
    `run` measures nothing and succeeds (a bad-input test that reaches it exits 0 and fails)."""
    answers = directory / "answers.json"
    answers.write_text(json.dumps({"info": info, "list": benchmarks, "topo": topology}))
    script = directory / "fake-engine"
    script.write_text(f"""#!{sys.executable}
import json, sys
answers = json.load(open({str(answers)!r}))
command = sys.argv[1] if len(sys.argv) > 1 else ""
if command in ("info", "list") or (command == "topo" and answers["topo"] is not None):
    print(json.dumps(answers[command]))
    sys.exit(0)
if command == "topo":
    print("commatlas-engine: error: unknown command 'topo' (use list, info or run)", file=sys.stderr)
    sys.exit(2)
if command == "run":  # measures nothing: enough to follow the CLI's run path
    print(json.dumps({{"event": "start", "total": 0}}))
    sys.exit(0)
sys.exit(1)
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def fixture_json(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


@functools.cache
def fixture_run(name: str) -> Path:
    """tests/fixtures/<name>/ as the reader opens a run: a folder whose large files are stored gzipped
    (the records cut from results/ by fixtures/cut_results.py) is copied once per session to a
    temporary folder with them unpacked (name.gz -> name)."""
    folder = FIXTURES / name
    if not folder.is_dir():
        raise FileNotFoundError(f"no fixture {folder}")
    if not any(folder.rglob("*.gz")):
        return folder
    copy = Path(tempfile.mkdtemp(prefix=f"commatlas-fixture-{name}-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        target = copy / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".gz":
            target.with_suffix("").write_bytes(gzip.decompress(path.read_bytes()))
        else:
            shutil.copyfile(path, target)
    return copy


def have_mpiexec() -> bool:
    return shutil.which("mpiexec") is not None or shutil.which("mpirun") is not None


MPI_LAUNCHERS = ("mpiexec", "mpirun", "orterun", "mpiexec.hydra", "mpiexec.openmpi", "mpirun.openmpi",
                 "mpiexec.mpich", "mpirun.mpich")


def path_without_mpi(directory: Path) -> str:
    """A PATH holding every program of this one but the MPI launchers: a machine without MPI,
    simulated (links to the programs, in `directory`)."""
    bin_dir = directory / "bin-without-mpi"
    bin_dir.mkdir(exist_ok=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            target = Path(entry) / name
            if name in MPI_LAUNCHERS or (bin_dir / name).exists() or not os.access(target, os.X_OK):
                continue
            (bin_dir / name).symlink_to(target)
    return str(bin_dir)


def terminal_map(text: str) -> list[tuple[str, list[str]]]:
    """The terminal map as printed, in either layout (commatlas.report.summary.map_table): per movement, in
    order, its label (folded lines joined) and its bands' size ranges."""
    import re

    lines = text.splitlines()
    end = lines.index("Findings") if "Findings" in lines else len(lines)
    head = next(i for i, line in enumerate(lines) if line.startswith(("movement ", "  sizes ")))
    out: list[tuple[str, list[str]]] = []
    if lines[head].startswith("  sizes "):  # stacked: a label line, then its bands indented
        for line in lines[head + 2:end]:
            if line[:1].strip():
                out.append((line.strip(), []))
            elif line.strip():
                out[-1][1].append(re.split(r"\s{2,}", line.strip())[0])
        return out
    at = lines[head].index("sizes")  # side by side: a folded label goes on below its first line
    folding = False
    for line in lines[head + 2:end]:
        label, sizes = line[:at].strip(), line[at:].strip().split("  ")[0]
        if label and sizes:
            out.append((label, [sizes]))
        elif label and folding:
            out[-1] = (out[-1][0] + " " + label, out[-1][1])
        elif sizes:
            out[-1][1].append(sizes)
        folding = bool(label)
    return out
