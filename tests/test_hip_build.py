"""The AMD (HIP) engine on a machine without an AMD GPU, as CI builds it: `info` says what
it is and that it has not run on AMD hardware, `list` shows every GPU benchmark unavailable with the
HIP runtime's reason, and a `--quick` run leaves the GPU suites out in one line and runs the host
suite. Point COMMATLAS_HIP_ENGINE at build-hip/engine/commatlas-engine (.ci/run does); without it these
skip. The header check runs everywhere: every cuda* name the engine uses has its HIP spelling."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, read_lines, run_cli

ENGINE_DIR = REPO / "engine"
HIP_NAMES = ENGINE_DIR / "backends" / "cuda" / "hip_names.h"


@pytest.fixture(scope="module")
def hip_engine() -> Path:
    path = os.environ.get("COMMATLAS_HIP_ENGINE")
    if not path:
        pytest.skip("COMMATLAS_HIP_ENGINE is not set (build-hip/engine/commatlas-engine; .ci/run sets it)")
    engine = Path(path)
    if not engine.is_file():
        pytest.fail(f"COMMATLAS_HIP_ENGINE={path} is not a file")
    return engine


def engine_json(engine: Path, *args: str) -> Any:
    done = subprocess.run([str(engine), *args, "--json"], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_info_names_the_hip_backend_and_says_it_never_ran_on_amd(hip_engine: Path) -> None:
    info = engine_json(hip_engine, "info")
    hip = info["backends"]["hip"]
    assert hip["built"] is True
    assert hip["hardware_tested"] is False
    assert "not yet run on AMD hardware" in hip["note"]
    assert "RCCL" in hip["note"] and "not compile-checked" in hip["note"]
    assert re.match(r"\d+\.\d+", hip["runtime_version"]), hip
    assert "hipErrorNoDevice" in hip["reason"]
    assert info["backends"]["cuda"]["built"] is False
    assert re.search(r"hipcc HIP \d+\.\d+.* gfx90a,gfx940", info["compiler"]), info["compiler"]
    # Every backend key is a real backend (a CMake list separator once split a reason into a "backend").
    assert all(re.fullmatch(r"[a-z]+", name) for name in info["backends"]), list(info["backends"])
    if info["backends"]["mpi"]["built"]:
        # Debian's Open MPI 4.1 offers no ROCm query: unknown is no, and the reason says so.
        assert info["backends"]["mpi"]["cuda_aware"] is False
        assert "ROCm" in info["backends"]["mpi"]["cuda_aware_reason"]


def test_list_shows_every_gpu_benchmark_unavailable_with_the_runtimes_reason(hip_engine: Path) -> None:
    benchmarks = engine_json(hip_engine, "list")
    gpu = [b for b in benchmarks if b["suite"] == "gpu"]
    assert len(gpu) >= 10, [b["key"] for b in benchmarks]
    for b in gpu:
        assert b["runnable"] is False, b
        assert "hipErrorNoDevice" in b["reason"] and "HIP" in b["reason"], b
    assert all(b["runnable"] for b in benchmarks if b["suite"] == "host")


def test_quick_run_leaves_the_gpu_suites_out_in_one_line(hip_engine: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "--quick", "--suite", "host", "--out", str(out),
                   env={"COMMATLAS_ENGINE": str(hip_engine)}, timeout=600)
    assert done.returncode == 0, done.stderr
    records = read_lines(out / "results.jsonl")
    meta = records[0]
    assert meta["type"] == "meta"
    # The HIP runtime and compiler versions travel in meta like the CUDA ones.
    assert meta["engine"]["backends"]["hip"]["runtime_version"]
    assert "hipcc HIP" in meta["engine"]["compiler"]
    results = [r for r in records if r.get("type") == "result"]
    assert results and all(r["benchmark"].startswith(("host.", "reference.")) for r in results)


def test_default_quick_run_says_why_gpu_suites_are_left_out(hip_engine: Path, tmp_path: Path) -> None:
    done = run_cli("run", "--quick", "--out", str(tmp_path / "run"), "--exclude", "mpi.*,reference.mpi*",
                   env={"COMMATLAS_ENGINE": str(hip_engine)}, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    left = [line for line in lines if line.startswith("leaves out ")]
    # One line for the suites without a GPU, with the runtime's reason; RCCL's absence is its own.
    no_gpu = [line for line in left if "no GPU" in line]
    assert len(no_gpu) == 1 and "gpu, mpi-gpu" in no_gpu[0] and "HIP: no device visible" in no_gpu[0], lines
    assert all("no GPU" in line or "rccl" in line.lower() for line in left), left
    assert any(line.startswith("runs host") for line in lines), lines


def cuda_names_used() -> dict[str, str]:
    """Every cuda* runtime name (cudaX...) in the engine's sources, with one file that uses it."""
    used: dict[str, str] = {}
    for path in sorted(ENGINE_DIR.rglob("*")):
        if path.suffix not in (".cu", ".cpp", ".h") or path == HIP_NAMES:
            continue
        for name in re.findall(r"\bcuda[A-Z]\w*", path.read_text(errors="replace")):
            used.setdefault(name, str(path.relative_to(REPO)))
    return used


def hip_names_covered() -> set[str]:
    text = HIP_NAMES.read_text()
    covered = set(re.findall(r"#define\s+(cuda\w+)", text))  # renamed
    covered |= set(re.findall(r"(?:enum|struct)\s+(cuda\w+)", text))  # declared for HIP
    covered |= set(re.findall(r"\b(cudaMemLocationType\w+)\s*=", text))  # enumerators
    covered |= set(re.findall(r"inline\s+\w+\s+(cuda\w+)\s*\(", text))  # adapters
    return covered


def test_every_cuda_name_under_engine_has_its_hip_spelling() -> None:
    used = cuda_names_used()
    assert "cudaMemcpyAsync" in used  # the scan sees the engine
    missing = {name: where for name, where in used.items() if name not in hip_names_covered()}
    assert not missing, f"add to {HIP_NAMES.relative_to(REPO)}: {missing}"


def test_amd_environment_dimensions_sweep_and_are_recorded(engine_path: Path, tmp_path: Path) -> None:
    """HSA_ENABLE_SDMA (SDMA vs blit copies) and HSA_XNACK (kernels on malloc memory) are swept like
    any tuning variable: every record says which value it ran under. Any engine shows it; on AMD
    the values change what the GPU benchmarks measure."""
    out = tmp_path / "run"
    done = run_cli("run", "--quick", "--only", "reference.host_memcpy", "--out", str(out),
                   "--sweep-env", "HSA_ENABLE_SDMA=0,1", "--sweep-env", "HSA_XNACK=1",
                   env={"COMMATLAS_ENGINE": str(engine_path)}, timeout=600)
    assert done.returncode == 0, done.stderr
    results = [r for r in read_lines(out / "results.jsonl") if r.get("type") == "result"]
    seen = {(r["params"].get("env.HSA_ENABLE_SDMA"), r["params"].get("env.HSA_XNACK")) for r in results}
    assert seen == {("0", "1"), ("1", "1")}, seen


def test_only_the_runtime_header_includes_the_cuda_headers() -> None:
    """The HIP build sees CUDA names only through gpu_runtime.h; a direct <cuda_runtime.h> elsewhere
    pulls NVIDIA's headers into an AMD compile (or fails where they are absent)."""
    direct = sorted(str(p.relative_to(REPO)) for p in ENGINE_DIR.rglob("*")
                    if p.suffix in (".cu", ".cpp", ".h") and p.name != "gpu_runtime.h"
                    and re.search(r"#\s*include\s*<cuda(_runtime)?\.h>", p.read_text(errors="replace")))
    assert not direct, f"include backends/cuda/gpu_runtime.h instead: {direct}"
