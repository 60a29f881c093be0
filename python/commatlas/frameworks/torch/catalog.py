"""The torch suite's benchmarks: what `commatlas list` shows and `--suite torch` / `--only torch.*`
select, and the declaration each measurement carries (key, category, interface, metric). Imports
nothing heavy: listing must not start PyTorch."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

SUITE = "torch"
# The suite's processes keep these whatever the caller set: NVLink SHARP (NVLS) multicast and
# PyTorch's symmetric-memory multicast stay off on the lent machines.
FIXED_ENVIRONMENT = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


@dataclass(frozen=True)
class TorchBenchmark:
    key: str
    category: str
    metric: str
    part: str          # which worker part measures it: "copy" (one process) or "dist" (a rank per GPU)
    operation: str     # the movement (engine/core/movement.h's vocabulary)
    direction: str
    mechanism: str
    description: str
    min_ranks: int = 1

    def declaration(self) -> dict[str, Any]:
        """The fields every measurement of it carries for `commatlas-engine ingest`."""
        return {"benchmark": self.key, "category": self.category, "interface": "torch", "suite": SUITE,
                "metric": self.metric}

    def movement(self) -> dict[str, Any]:
        """What it moves, without places: what a benchmark-wide skip declares, like the engine's."""
        return {"operation": self.operation, "direction": self.direction, "mechanism": self.mechanism,
                "from": None, "to": None, "choices": {}, "same_node": True}


BENCHMARKS = (
    TorchBenchmark("torch.copy", "explicit_copy", "bandwidth", "copy", "copy", "uni", "torch",
                   "tensor.copy_ host <-> GPU (pinned, pageable) and GPU <-> GPU, CUDA events around a loop"),
    TorchBenchmark("torch.allreduce", "collective", "bandwidth", "dist", "allreduce", "all_to_all", "torch_nccl",
                   "torch.distributed.all_reduce (NCCL), one process per GPU", 2),
    TorchBenchmark("torch.allgather", "collective", "bandwidth", "dist", "allgather", "all_to_all", "torch_nccl",
                   "torch.distributed.all_gather_into_tensor (NCCL), one process per GPU", 2),
    TorchBenchmark("torch.bandwidth", "point_to_point", "bandwidth", "dist", "send_recv", "uni", "torch_nccl",
                   "torch.distributed.send/recv (NCCL), rank 0 -> rank 1", 2),
    TorchBenchmark("torch.pingpong", "point_to_point", "latency", "dist", "ping_pong", "half_round_trip", "torch_nccl",
                   "torch.distributed.send/recv ping-pong (NCCL), half a round trip", 2),
    TorchBenchmark("torch.ddp_step", "pattern", "latency", "dist", "bucketed_allreduce", "all_to_all", "torch_nccl",
                   "DDP training step of a GPT-2-small-sized model (124M parameters, synthetic tokens) by bucket_cap_mb", 2),
    TorchBenchmark("torch.ddp_allreduce", "pattern", "latency", "dist", "bucketed_allreduce", "all_to_all",
                   "torch_nccl", "the NCCL kernels' GPU time inside that DDP step (torch.profiler), by bucket_cap_mb", 2),
)
BY_KEY = {b.key: b for b in BENCHMARKS}


def torch_missing() -> str | None:
    """Why PyTorch cannot be imported here (without importing it: listing stays fast), or None."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else "PyTorch is not installed (import torch fails)"


def listed(gpus: int) -> list[dict[str, Any]]:
    """The suite's entries for `commatlas list` and the selection, in the engine's listing shape."""
    why = torch_missing() or (None if gpus > 0 else "no GPU visible: the torch suite measures CUDA tensors")
    out = []
    for b in BENCHMARKS:
        reason = why or (f"needs {b.min_ranks} GPUs (one process per GPU)" if gpus < b.min_ranks else None)
        out.append({"key": b.key, "category": b.category, "interface": "torch", "suite": SUITE, "metric": b.metric,
                    "description": b.description, "min_ranks": 1 if b.part == "copy" else b.min_ranks,
                    "max_ranks": 1 if b.part == "copy" else 0, "runnable": reason is None,
                    **({"reason": reason} if reason else {}), "runs_in": "python -m commatlas.frameworks.torch.worker"})
    return out


def is_torch(benchmark: dict[str, Any]) -> bool:
    return benchmark.get("suite") == SUITE


def fixed_environment() -> dict[str, str]:
    return dict(FIXED_ENVIRONMENT)


def apply_fixed_environment() -> None:
    os.environ.update(FIXED_ENVIRONMENT)
