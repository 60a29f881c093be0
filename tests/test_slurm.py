"""A real Slurm launch: `commatlas run --suite mpi --launcher "srun --mpi=pmix -n 2"` through the
one-node Slurm that scripts/ci/slurm_up.sh starts (Debian's slurm-wlm and munge, as root). The
records must carry the job's facts. Skipped, with the reason, where Slurm cannot be started."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts" / "ci"


def why_no_slurm() -> str | None:
    if os.geteuid() != 0:
        return "needs root to start slurmd"
    missing = [p for p in ("slurmctld", "slurmd", "munged", "srun") if shutil.which(p) is None]
    return f"Slurm not installed ({', '.join(missing)} missing; apt-get install slurm-wlm munge)" if missing else None


@pytest.fixture(scope="module")
def slurm_conf(tmp_path_factory: pytest.TempPathFactory):
    reason = why_no_slurm()
    if reason:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("slurm")
    up = subprocess.run([str(SCRIPTS / "slurm_up.sh"), str(folder)], capture_output=True, text=True, timeout=90,
                        check=False)
    if up.returncode != 0:
        pytest.skip(f"Slurm did not start: {up.stderr.strip()[-300:]}")
    yield folder / "slurm.conf"
    subprocess.run([str(SCRIPTS / "slurm_down.sh"), str(folder)], timeout=60, check=False)


def test_run_through_srun_records_the_job(slurm_conf: Path, engine_path: Path, tmp_path: Path, validator) -> None:
    run_dir = tmp_path / "run"
    env = {**os.environ, "SLURM_CONF": str(slurm_conf), "COMMATLAS_ENGINE": str(engine_path),
           "PYTHONPATH": str(REPO / "python")}
    # --time bounds the job inside Slurm too, should anything hang past the test's own timeout.
    done = subprocess.run([sys.executable, "-m", "commatlas", "run", "--suite", "mpi", "--only",
                           "mpi.pingpong,mpi.allreduce", "--sizes", "8", "--quick", "--out", str(run_dir),
                           "--launcher", "srun --mpi=pmix -n 2 --time=2"],
                          capture_output=True, text=True, env=env, timeout=150, check=False)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    results = [r for r in records if r["type"] == "result"]
    assert {r["benchmark"] for r in results} == {"mpi.pingpong", "mpi.allreduce"}
    for r in results:
        validator.validate(r)
        job = r["placement"]["job"]
        assert job["scheduler"] == "slurm" and job["job_id"].isdigit(), job
        assert job["ntasks"] == "2" and job["nodelist"] and job["mpi"] == "pmix", job
        assert r["placement"]["same_node"] is True
