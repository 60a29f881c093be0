"""Launcher command lines for each MPI implementation, from recorded `mpiexec --version` text."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from commatlas.errors import UsageError
from commatlas.run.launcher import (MpiImplementation, cores_per_rank, custom_launcher, detect_implementation, find_launcher,
                                    mpiexec_launcher)

OPEN_MPI_4 = "mpiexec (OpenRTE) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
OPEN_MPI_5 = "mpiexec (Open MPI) 5.0.3\n\nReport bugs to https://www.open-mpi.org/community/help/\n"
MPICH = ("HYDRA build details:\n    Version:                                 4.0.2\n"
         "    Release Date:                            Thu Apr  7 12:34:45 CDT 2022\n"
         "    CC:                              gcc\n    Configure options: ...\n")
INTEL_MPI = "Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)\n"


@pytest.mark.parametrize("text, expected", [
    (OPEN_MPI_4, MpiImplementation.OPEN_MPI), (OPEN_MPI_5, MpiImplementation.OPEN_MPI),
    (MPICH, MpiImplementation.MPICH), (INTEL_MPI, MpiImplementation.MPICH), ("something else 1.0", MpiImplementation.UNKNOWN),
])
def test_detect_implementation(text: str, expected: MpiImplementation) -> None:
    assert detect_implementation(text) is expected


def test_open_mpi_as_root_with_enough_cores() -> None:
    launcher = mpiexec_launcher(4, OPEN_MPI_4, cores=8, is_root=True)
    assert launcher.command(["engine", "run"]) == ["mpiexec", "--allow-run-as-root", "--map-by", "slot:PE=2", "--bind-to",
                                                   "core", "-n", "4", "engine", "run"]
    assert launcher.kind == "openmpi"


def test_open_mpi_not_root_oversubscribed() -> None:
    launcher = mpiexec_launcher(4, OPEN_MPI_5, cores=2, is_root=False)
    assert launcher.prefix == ("mpiexec", "--oversubscribe", "-n", "4")
    assert launcher.notes, "sharing cores changes timings, which the user is told"


def test_open_mpi_exactly_as_many_ranks_as_cores_needs_no_oversubscribe() -> None:
    assert mpiexec_launcher(2, OPEN_MPI_4, cores=2, is_root=False).prefix == (
        "mpiexec", "--map-by", "core", "--bind-to", "core", "-n", "2")


@pytest.mark.parametrize("is_root", [True, False])
def test_mpich_never_gets_open_mpi_flags(is_root: bool) -> None:
    launcher = mpiexec_launcher(8, MPICH, cores=2, is_root=is_root, mpiexec="/opt/mpich/bin/mpiexec")
    assert launcher.prefix == ("/opt/mpich/bin/mpiexec", "-n", "8")
    assert launcher.kind == "mpich"


def test_custom_launcher_is_used_verbatim() -> None:
    launcher = custom_launcher("sh -c 'exec \"$@\"' launcher")
    assert launcher.prefix == ("sh", "-c", 'exec "$@"', "launcher")
    assert launcher.kind == "custom" and launcher.ranks is None
    assert launcher.command(["engine", "run", "--mpi"])[-3:] == ["engine", "run", "--mpi"]


@pytest.mark.parametrize("text", ["", "   ", "no-such-launcher-xyz -N 2", "srun 'unbalanced"])
def test_bad_custom_launcher(text: str) -> None:
    with pytest.raises(UsageError):
        custom_launcher(text)


def test_find_launcher_reads_the_mpiexec_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\ncat <<'TEXT'\n" + MPICH + "TEXT\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(tmp_path))
    launcher = find_launcher(3, None)
    assert launcher.prefix == (str(fake), "-n", "3")


def test_find_launcher_without_mpiexec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError, match="no mpiexec"):
        find_launcher(2, None)


# --- rank counts a machine cannot host, refused before anything starts ---------------------------

from commatlas.run.launcher import MAX_RANKS_PER_CORE, check_rank_capacity  # noqa: E402


def test_far_more_ranks_than_cores_is_refused_with_the_limit() -> None:
    with pytest.raises(UsageError, match=f"at most {2 * MAX_RANKS_PER_CORE} ranks"):
        check_rank_capacity(10000, cores=2, open_files=None)
    check_rank_capacity(2 * MAX_RANKS_PER_CORE, cores=2, open_files=None)  # --oversubscribe's range


def test_ranks_beyond_the_open_file_limit_are_refused() -> None:
    with pytest.raises(UsageError, match="ulimit -n 64"):
        check_rank_capacity(16, cores=64, open_files=64)


def test_full_node_ranks_are_bound_one_per_core_in_each_librarys_words() -> None:
    ompi = mpiexec_launcher(16, OPEN_MPI_4, cores=16, is_root=False)
    assert ompi.prefix == ("mpiexec", "--map-by", "core", "--bind-to", "core", "-n", "16")
    hydra = mpiexec_launcher(16, MPICH, cores=16, is_root=False, mpiexec="mpiexec.mpich")
    assert hydra.prefix == ("mpiexec.mpich", "-bind-to", "core", "-n", "16")


def test_fewer_ranks_than_cores_each_get_a_block_of_cores() -> None:
    """A GPU rank's helper threads (NCCL's proxies, the CUDA runtime's) need cores beside its main
    thread: 2 ranks on 32 cores get 16 each, in each library's words; 3 ranks on 32 get 10."""
    ompi = mpiexec_launcher(2, OPEN_MPI_4, cores=32, is_root=False)
    assert ompi.prefix == ("mpiexec", "--map-by", "slot:PE=16", "--bind-to", "core", "-n", "2")
    assert "--map-by" in mpiexec_launcher(2, OPEN_MPI_5, cores=32, is_root=True).prefix
    hydra = mpiexec_launcher(3, MPICH, cores=32, is_root=False)
    assert hydra.prefix == ("mpiexec", "-bind-to", "core:10", "-n", "3")
    assert cores_per_rank(2, 32) == 16 and cores_per_rank(32, 32) == 1 and cores_per_rank(33, 32) is None


def test_more_ranks_than_cores_are_left_unbound() -> None:
    ompi = mpiexec_launcher(4, OPEN_MPI_4, cores=2, is_root=False)
    assert "--bind-to" not in ompi.prefix and "--oversubscribe" in ompi.prefix
    assert "-bind-to" not in mpiexec_launcher(4, MPICH, cores=2, is_root=False).prefix


def test_ranks_all_means_every_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from commatlas import cli

    monkeypatch.setattr(cli, "physical_cores", lambda: 16)
    assert cli.parse_ranks(None) == (None, ())
    assert cli.parse_ranks("4") == (4, ())
    assert cli.parse_ranks("all") == (16, (16,))
    assert cli.parse_ranks("2,all") == (2, (2, 16))
    assert cli.parse_ranks("2,4") == (2, (2, 4))
    with pytest.raises(UsageError):
        cli.parse_ranks("two")
