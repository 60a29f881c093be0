"""The build records commatlas's own commit, so every record says which code measured it:
configured from a git checkout of commatlas it names that commit and whether the tree was dirty;
configured from a copy inside another repository it says "commit unknown" with the package
version, never the other repository's commit. Every build reads it again (the commatlas_git_info
target), so a build folder configured at one commit does not record it for later ones. Configure
and that target only (no backends, no compile): a few seconds."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("git") is None,
                                reason="needs cmake and git")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def copy_sources(dst: Path) -> None:
    dst.mkdir(parents=True)
    shutil.copy(REPO / "CMakeLists.txt", dst / "CMakeLists.txt")
    shutil.copytree(REPO / "engine", dst / "engine")


def configure(source: Path, build: Path) -> dict[str, str]:
    done = subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-DCOMMATLAS_WITH_CUDA=OFF",
                           "-DCOMMATLAS_WITH_MPI=OFF", "-DCOMMATLAS_WITH_NCCL=OFF", "-DCOMMATLAS_BUILD_TESTS=OFF"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return git_info(build)


def git_info(build: Path) -> dict[str, str]:
    header = (build / "engine" / "generated" / "git_info.h").read_text()
    return dict(re.findall(r'#define (COMMATLAS_\w+) "(.*)"', header))


def build_git_info(build: Path) -> dict[str, str]:
    """What the build step that runs before every engine build writes."""
    done = subprocess.run(["cmake", "--build", str(build), "--target", "commatlas_git_info"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return git_info(build)


def version() -> str:
    text = (REPO / "CMakeLists.txt").read_text()
    found = re.search(r"project\(commatlas VERSION (\S+)", text)
    assert found
    return found.group(1)


def test_copy_inside_another_repository_records_commit_unknown(tmp_path: Path) -> None:
    outer = tmp_path / "someone-elses-project"
    copy_sources(outer / "third_party" / "commatlas")
    git(outer, "init", "-q")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "vendored")
    outer_sha = git(outer, "rev-parse", "--short=12", "HEAD")

    info = configure(outer / "third_party" / "commatlas", tmp_path / "build")
    assert info["COMMATLAS_GIT_SHA"] == "unknown"
    assert outer_sha not in str(info)
    assert info["COMMATLAS_GIT_DIRTY"] == "unknown"
    assert "commit unknown" in info["COMMATLAS_PROVENANCE"]
    assert version() in info["COMMATLAS_PROVENANCE"]


def test_checkout_records_its_commit_and_dirty_flag(tmp_path: Path) -> None:
    own = tmp_path / "commatlas"
    copy_sources(own)
    git(own, "init", "-q")
    git(own, "add", "-A")
    git(own, "commit", "-qm", "commatlas")
    sha = git(own, "rev-parse", "--short=12", "HEAD")

    clean = configure(own, tmp_path / "build")
    assert clean["COMMATLAS_GIT_SHA"] == sha
    assert clean["COMMATLAS_GIT_DIRTY"] == "false"

    with (own / "engine" / "core" / "harness.cpp").open("a") as f:
        f.write("// an edit\n")
    dirty = configure(own, tmp_path / "build")
    assert dirty["COMMATLAS_GIT_SHA"] == sha
    assert dirty["COMMATLAS_GIT_DIRTY"] == "true"
    assert "uncommitted" in dirty["COMMATLAS_PROVENANCE"]


def test_a_build_after_a_new_commit_records_it_without_reconfiguring(tmp_path: Path) -> None:
    """The 2-core VM's build folder, configured at 842702e and built two sessions later, wrote
    842702e into every record. Now each build reads the commit again; an unchanged tree leaves the
    header untouched, so nothing recompiles."""
    own = tmp_path / "commatlas"
    copy_sources(own)
    git(own, "init", "-q")
    git(own, "add", "-A")
    git(own, "commit", "-qm", "commatlas")
    build = tmp_path / "build"
    first = configure(own, build)
    header = build / "engine" / "generated" / "git_info.h"
    stamp = header.stat().st_mtime_ns

    assert build_git_info(build) == first
    assert header.stat().st_mtime_ns == stamp  # unchanged text, untouched file

    with (own / "engine" / "core" / "harness.cpp").open("a") as f:
        f.write("// an edit\n")
    assert build_git_info(build)["COMMATLAS_GIT_DIRTY"] == "true"
    git(own, "commit", "-qam", "an edit")
    later = build_git_info(build)
    assert later["COMMATLAS_GIT_SHA"] == git(own, "rev-parse", "--short=12", "HEAD") != first["COMMATLAS_GIT_SHA"]
    assert later["COMMATLAS_GIT_DIRTY"] == "false"
    assert later["COMMATLAS_PROVENANCE"] == f"git checkout of commatlas at {later['COMMATLAS_GIT_SHA']}"
