"""Several MPI libraries in one run: `commatlas run --mpi openmpi,mpich` runs the MPI phase once
per library, each engine under its own mpiexec, into one run directory; every record names its
library, MPI movements take it as a choice, the answers let the libraries compete, and each
library's figures sit beside its own OSU-method reference.

Needs an engine per library: the default engine (COMMATLAS_ENGINE or the installed one) and the
others in $COMMATLAS_MPI_ENGINES (scripts/build_mpi_engines.sh; CI builds MPICH's beside Open MPI's)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import assert_one_line_error, assert_valid_run, run_cli
from commatlas.io.engine import Engine, normalise_mpi_name as normalise
from commatlas.run.mpi_libraries import build_of, candidate_engines

WANTED = ("openmpi", "mpich")


@pytest.fixture(scope="module")
def libraries(engine_path: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in candidate_engines(Engine(engine_path)):
        build = build_of(Engine(path))
        if build is not None:
            found.setdefault(build.library, path)
    missing = [w for w in WANTED if w not in found]
    if missing:
        pytest.skip(f"no engine built against {', '.join(missing)} (have {sorted(found)}; "
                    f"scripts/build_mpi_engines.sh and COMMATLAS_MPI_ENGINES)")
    return found


@pytest.fixture(scope="module")
def two_library_run(libraries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("libraries") / "run"
    # reference.osu*: the OSU-method points run where the selection names them.
    done = run_cli("run", "--mpi", "openmpi,mpich", "--only", "mpi.pingpong,mpi.bandwidth,mpi.allreduce,reference.osu*",
                   "--sizes", "1,64K", "--time-budget", "0.02", "--precision", "off", "--out", str(out),
                   env={"COMMATLAS_STARTUP_TIMEOUT_S": "120"}, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (out.parent / "terminal.txt").write_text(done.stdout + done.stderr)
    return out


def test_names_and_spellings_resolve() -> None:
    assert normalise("Open MPI") == normalise("OpenMPI") == normalise("ompi") == "openmpi"
    assert normalise("Cray MPICH") == "cray-mpich"
    assert normalise("MVAPICH2") == "mvapich"


def test_every_record_names_its_library(two_library_run: Path, validator) -> None:
    records = assert_valid_run(two_library_run / "results.jsonl", validator)
    measured = [r for r in records if r["type"] == "result"]
    by_library = {r["mpi_library"]["id"] for r in measured}
    assert by_library == set(WANTED), by_library
    for r in measured:
        library = r["mpi_library"]
        assert library["name"] in ("Open MPI", "MPICH") and library["version"], library
        if r["movement"]["mechanism"].startswith("mpi_"):
            assert r["movement"]["choices"]["mpi_library"] == f"{library['name']} {library['version']}", r["point"]
    # The same point under two libraries is two points (a resumed run skips only its own).
    points = [r["point"] for r in measured]
    assert len(points) == len(set(points))
    # Each phase ran under its own launcher.
    log = (two_library_run / "engine.log").read_text()
    assert "mpiexec.mpich" in log and ("mpiexec.openmpi" in log or "/usr/bin/mpiexec " in log), log[:2000]


def test_each_library_has_its_osu_method_figures(two_library_run: Path) -> None:
    from commatlas.analysis import osu
    from commatlas.io.records import read_records

    records = read_records(two_library_run / "results.jsonl")
    rows = osu.comparison_rows(records)
    names = {row.library.rsplit(" ", 1)[0] for row in rows}
    assert names == {"Open MPI", "MPICH"}, names
    for row in rows:
        assert row.engine > 0 and row.reference > 0 and row.rounds == 1, row
    # Both libraries at every size each measured.
    per_library = {}
    for row in rows:
        per_library.setdefault(row.library, set()).add((row.benchmark, row.bytes))
    assert len(per_library) == 2 and len(set(map(frozenset, per_library.values()))) == 1, per_library


def test_libraries_compete_in_the_answers(two_library_run: Path) -> None:
    answers = json.loads((two_library_run / "answers.json").read_text())
    rows = [mv for mv in answers["movements"] if len(mv["libraries"]) == 2]
    assert rows, [mv["label"] for mv in answers["movements"]]
    for mv in rows:
        assert set(mv["by_library"]) == set(mv["libraries"])
        assert mv["fastest_library"] in mv["libraries"]
        for cell in mv["cells"]:
            if cell["winner"] and cell["runner_up"]:
                assert cell["winner"]["choices"]["mpi_library"] != cell["runner_up"]["choices"].get("mpi_library") \
                    or cell["winner"]["mechanism"] != cell["runner_up"]["mechanism"]
    said = [f["text"] for f in answers["findings"] if f["kind"] == "mpi_library"]
    for text in said:
        assert "slower than" in text and ("Open MPI" in text and "MPICH" in text), text


def test_an_unknown_library_is_one_line(libraries: dict[str, Path]) -> None:
    assert_one_line_error(run_cli("run", "--mpi", "nosuchmpi", "--only", "mpi.pingpong"))
    assert_one_line_error(run_cli("run", "--mpi", "openmpi,,mpich", "--only", "mpi.pingpong"))
