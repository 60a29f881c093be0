"""The build records commatlas's own commit, so every record says which code measured it:
configured from a git checkout of commatlas it names that commit and whether the tree was dirty;
configured from a copy inside another repository it says "commit unknown" with the package
version, never the other repository's commit. Configure only (no backends, no compile): a few
seconds."""

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
    header = (build / "engine" / "generated" / "build_info.h").read_text()
    return dict(re.findall(r'#define (COMMATLAS_\w+) "(.*)"', header))


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
