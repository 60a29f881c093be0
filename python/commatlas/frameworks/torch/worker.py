"""The torch suite's measuring process: `python -m commatlas.frameworks.torch.worker`.

Part "copy" runs as one plain process; part "dist" runs one process per GPU under the launcher the
engine's MPI phase uses (its rank, size and local rank are read from the launcher's environment:
Open MPI, MPICH/Hydra, Slurm or torchrun's). Rank 0 prints one JSON measurement per line, in the
input format of `commatlas-engine ingest` (engine/core/ingest.h), which writes the records.

Timing is the way a PyTorch user times: untimed operations first, then CUDA events on the current
stream around a loop of operations, synchronised on the end event. Every figure is verified: the
destination is made wrong before each timed sample and compared after the last one (exactly for
copies and send/recv, against the exact expected sum for all_reduce)."""

from __future__ import annotations

import argparse
import faulthandler
import json
import math
import os
import socket
import sys
import time
from contextlib import nullcontext
from typing import Any, Callable

from commatlas.frameworks.torch.catalog import BY_KEY, apply_fixed_environment

# A sample lasts at least this long (CUDA events resolve about 0.5 us; a loop this long hides it).
MIN_SAMPLE_S = 200e-6
MIN_SAMPLES, MAX_SAMPLES = 10, 200
WARMUP_OPS = 5
WARM_SAMPLES = 2
MAX_OPS = 1000
DEFAULT_SIZES = (8, 4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20)  # the engine's transfer grid
PINGPONG_LARGEST = 1 << 20
DEFAULT_BUCKETS = (1, 25, 100, 500)
POISON = 255  # no byte of the pattern ((7i + 3) mod 251) is 255


def emit(measurement: dict[str, Any]) -> None:
    print(json.dumps(measurement), flush=True)


def environment_rank() -> tuple[int, int, int]:
    """(rank, size, local rank) from the launcher's environment; (0, 1, 0) when not launched."""
    def first(*names: str) -> int | None:
        for name in names:
            value = os.environ.get(name)
            if value is not None and value.strip().isdigit():
                return int(value)
        return None
    rank = first("RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")
    size = first("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
    local = first("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")
    if rank is None or size is None:
        return 0, 1, 0
    return rank, size, local if local is not None else rank


class Context:
    """This process's place in the job and how it times (CUDA events, or the host clock on CPU)."""

    def __init__(self, torch: Any, device: Any, rank: int = 0, size: int = 1, dist: Any = None) -> None:
        self.torch, self.device, self.rank, self.size, self.dist = torch, device, rank, size, dist
        self.node = socket.gethostname()
        # Said in every record's timing method: the framework's NCCL need not be the engine's.
        self.versions = f"PyTorch {torch.__version__}"
        if device.type == "cuda":
            nccl = ".".join(str(v) for v in torch.cuda.nccl.version()) if dist is not None else None
            self.versions += f", CUDA {torch.version.cuda}" + (f", its NCCL {nccl}" if nccl else "")

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def members(self) -> str:
        """What the ranks are, in words: one process per GPU (gloo on CPU only in tests)."""
        return "GPUs" if self.cuda else "CPU processes"

    def timer(self) -> Callable[[], Callable[[], float]]:
        torch = self.torch
        if self.cuda:
            def start() -> Callable[[], float]:
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()

                def stop() -> float:
                    end.record()
                    end.synchronize()
                    return begin.elapsed_time(end) / 1e3
                return stop
            return start

        def start_host() -> Callable[[], float]:
            t0 = time.perf_counter()
            return lambda: time.perf_counter() - t0
        return start_host

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def barrier(self) -> None:
        if self.dist is not None and self.size > 1:
            self.dist.barrier()
        self.sync()

    def agree_max(self, values: list[float]) -> list[float]:
        """Element-wise maximum over ranks (one collective), or the values themselves alone."""
        if self.dist is None or self.size == 1:
            return values
        t = self.torch.tensor(values, dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return [float(x) for x in t.tolist()]

    def gather(self, value: Any) -> list[Any]:
        if self.dist is None or self.size == 1:
            return [value]
        out: list[Any] = [None] * self.size
        self.dist.all_gather_object(out, value)
        return out


def measure(ctx: Context, op: Callable[[], None], reset: Callable[[], None], budget_s: float,
            ops_cap: int = MAX_OPS, max_over_ranks: bool = True) -> tuple[list[float], int]:
    """Per-operation seconds of each timed sample, and the operations per sample. `reset` makes the
    destination wrong again (outside the timed window); every rank runs the same counts."""
    start = ctx.timer()
    reset()
    for _ in range(min(WARMUP_OPS, ops_cap)):
        op()
    reset()
    ctx.barrier()
    stop = start()
    op()
    first = max(stop(), 1e-9)
    ops = max(1, min(ops_cap, MAX_OPS, math.ceil(MIN_SAMPLE_S / first)))
    samples = max(MIN_SAMPLES, min(MAX_SAMPLES, int(budget_s / (ops * first))))
    ops, samples = (int(x) for x in ctx.agree_max([float(ops), float(samples)]))
    for _ in range(WARM_SAMPLES):
        reset()
        for _ in range(ops):
            op()
    per_op = []
    for _ in range(samples):
        reset()
        ctx.barrier()
        stop = start()
        for _ in range(ops):
            op()
        per_op.append(stop() / ops)
    return (ctx.agree_max(per_op) if max_over_ranks else per_op), ops


def pattern_bytes(torch: Any, n: int, device: Any) -> Any:
    return ((torch.arange(n, dtype=torch.int64, device=device) * 7 + 3) % 251).to(torch.uint8)


def first_difference(torch: Any, got: Any, want: Any) -> str:
    bad = (got != want).nonzero()
    if bad.numel() == 0:
        return ""
    i = int(bad[0].item())
    return f"element {i} is {got.view(-1)[i].item()}, expected {want.view(-1)[i].item()}"


def timing_text(ctx: Context, what: str, ops: int, ranks: str = "") -> str:
    clock = "CUDA events on the current stream" if ctx.cuda else "host perf_counter"
    return (f"{clock} around a loop of {ops} {what} (PyTorch user timing), after {WARMUP_OPS} untimed "
            f"operations and {WARM_SAMPLES} untimed samples{ranks}; {ctx.versions}")


def endpoint(memory: str, gpu: int | None, allocator: str, node: str, rank: int | None = None) -> dict[str, Any]:
    return {"memory": memory, "gpu": gpu, "numa": None, "rank": rank, "node": node, "processor": False,
            "allocator": allocator, "first_touch": "gpu" if memory == "gpu" else "cpu"}


def base(key: str, params: dict[str, Any], movement: dict[str, Any] | None, size: int | None, ranks: int,
         repeat: int | None, record_env: dict[str, str]) -> dict[str, Any]:
    out = {**BY_KEY[key].declaration(), "params": {**params, **{f"env.{k}": v for k, v in record_env.items()}},
           "bytes": size, "ranks": ranks}
    if movement is not None:
        out["movement"] = movement
    if repeat is not None:
        out["repeat"] = repeat
    return out


def result(identity: dict[str, Any], per_op: list[float], bytes_per_op: float, method: str, ops: int,
           check: tuple[bool, int, str], verify_method: str, includes: str, max_over_ranks: bool) -> dict[str, Any]:
    ok, checked, detail = check
    return {"type": "result", **identity, "time": round(time.time(), 3), "samples_s": per_op,
            "bytes_per_op": bytes_per_op,
            "timing": {"method": method, "ops_per_sample": ops, "warmup_samples": WARM_SAMPLES,
                       "max_over_ranks": max_over_ranks},
            "latency_includes": includes,
            "verified": {"ok": ok, "bytes_checked": checked, "method": verify_method,
                         **({"detail": detail} if detail else {})}}


# --- copies: one process ---------------------------------------------------------------------------

def copy_cases(torch: Any) -> list[dict[str, Any]]:
    cases = []
    for host_allocator in ("pinned", "pageable"):
        for path in ("h2d", "d2h"):
            cases.append({"path": path, "host_allocator": host_allocator, "src_gpu": 0, "dst_gpu": 0})
    if torch.cuda.device_count() >= 2:
        cases += [{"path": "peer", "src_gpu": 0, "dst_gpu": 1}, {"path": "peer", "src_gpu": 1, "dst_gpu": 0}]
    return cases


def run_copies(ctx: Context, sizes: list[int], budget_s: float, repeat: int | None, env: dict[str, str]) -> None:
    torch = ctx.torch
    for case in copy_cases(torch):
        path, pinned = case["path"], case.get("host_allocator") == "pinned"
        non_blocking = pinned or path == "peer"
        host_end = endpoint("host", None, case.get("host_allocator", ""), ctx.node)
        src_end = host_end if path == "h2d" else endpoint("gpu", case["src_gpu"], "device", ctx.node)
        dst_end = host_end if path == "d2h" else endpoint("gpu", case["dst_gpu"], "device", ctx.node)
        params = {**case, "non_blocking": non_blocking}
        movement = {"operation": "copy", "direction": "uni", "mechanism": "torch", "from": src_end, "to": dst_end,
                    "choices": {"non_blocking": non_blocking}, "same_node": True}
        for size in sorted(sizes, reverse=True):
            identity = base("torch.copy", params, movement, size, 1, repeat, env)
            with torch.cuda.device(case["src_gpu"] if path == "peer" else 0):
                src = pattern_bytes(torch, size, f"cuda:{case['src_gpu']}")
                if path == "d2h":
                    dst = torch.empty(size, dtype=torch.uint8, pin_memory=pinned)
                else:
                    if path == "h2d":
                        src = src.cpu().pin_memory() if pinned else src.cpu()
                    dst = torch.empty(size, dtype=torch.uint8, device=f"cuda:{case['dst_gpu']}")

                def op() -> None:
                    dst.copy_(src, non_blocking=non_blocking)
                per_op, ops = measure(ctx, op, lambda: dst.fill_(POISON), budget_s)
                ctx.sync()
                want = src.cpu()
                got = dst.cpu()
                detail = first_difference(torch, got, want)
                check = (not detail, size, detail)
                emit(result(identity, per_op, float(size), timing_text(ctx, f"tensor.copy_(non_blocking={non_blocking})", ops),
                            ops, check, "bytes", "", False))
                del src, dst
        torch.cuda.empty_cache()


# --- torch.distributed: one process per GPU ----------------------------------------------------------

def allreduce_ops_cap(ranks: int, largest_sum: int) -> int:
    """In-place sums multiply the buffer by the rank count each time: the loop stays within what
    float32 holds exactly (powers of two only move the exponent; other counts grow the mantissa)."""
    if ranks < 2:
        return MAX_OPS
    limit = 100 if ranks & (ranks - 1) == 0 else 24
    return max(1, min(MAX_OPS, int((limit - math.log2(largest_sum)) / math.log2(ranks)) + 1))


def run_collectives(ctx: Context, keys: list[str], sizes: list[int], budget_s: float, repeat: int | None,
                    env: dict[str, str], mechanism: str) -> None:
    torch, dist, n = ctx.torch, ctx.dist, ctx.size
    launch = {"launch": "rank_per_gpu", "gpus": ",".join(str(i) for i in range(n))}
    every = endpoint("gpu", None, "device", ctx.node)
    ranks_text = f"; per sample the slowest rank's time; one process per GPU ({n})" if ctx.cuda else \
        f"; per sample the slowest rank's time; {n} processes"
    for key in ("torch.allreduce", "torch.allgather"):
        if key not in keys:
            continue
        operation = key.split(".")[1]
        movement = {"operation": operation, "direction": "all_to_all", "mechanism": mechanism, "from": every,
                    "to": every, "participants": n, "choices": {"launch": "rank_per_gpu"}, "same_node": True}
        for size in sorted(sizes, reverse=True):
            identity = base(key, launch, movement, size, n, repeat, env)
            elements = size // 4
            if operation == "allgather":
                elements -= elements % n
            if elements < max(1, n if operation == "allgather" else 1):
                if ctx.rank == 0:
                    emit({"type": "skip", **identity, "reason": f"{size} B holds no whole float per rank"})
                continue
            index = torch.arange(elements, dtype=torch.int64, device=ctx.device)
            if operation == "allreduce":
                mine = ((index + 3 * ctx.rank) % 8 + 1).to(torch.float32)
                total = sum(((index + 3 * r) % 8 + 1) for r in range(n)).to(torch.float64)
                buffer = mine.clone()
                cap = allreduce_ops_cap(n, 8 * n)

                def op() -> None:
                    dist.all_reduce(buffer)
                per_op, ops = measure(ctx, op, lambda: buffer.copy_(mine), budget_s, cap)
                want = (total * float(n) ** (ops - 1)).to(torch.float32)
                got = buffer
                what = "in-place dist.all_reduce(SUM) calls"
                includes = f"one dist.all_reduce of {size} B float32 over {n} {ctx.members}, launch included, back to back"
            else:
                chunk = elements // n
                mine = ((torch.arange(chunk, device=ctx.device) + 5 * ctx.rank) % 8 + 1).to(torch.float32)
                out = torch.empty(chunk * n, dtype=torch.float32, device=ctx.device)
                want = torch.cat([((torch.arange(chunk, device=ctx.device) + 5 * r) % 8 + 1).to(torch.float32)
                                  for r in range(n)])

                def op() -> None:
                    dist.all_gather_into_tensor(out, mine)
                per_op, ops = measure(ctx, op, lambda: out.fill_(-1.0), budget_s)
                got = out
                what = "dist.all_gather_into_tensor calls"
                includes = f"one dist.all_gather_into_tensor of {size} B over {n} {ctx.members}, launch included, back to back"
            detail = first_difference(torch, got, want)
            checks = ctx.gather((not detail, detail))
            bad = [(r, d) for r, (ok, d) in enumerate(checks) if not ok]
            check = (not bad, elements * 4 * n, f"rank {bad[0][0]}: {bad[0][1]}" if bad else "")
            if ctx.rank == 0:
                emit(result(identity, per_op, float(elements * 4), timing_text(ctx, what, ops, ranks_text), ops, check,
                            "bytes", includes, True))
            del got, want, mine
            if ctx.cuda:
                torch.cuda.empty_cache()


def run_point_to_point(ctx: Context, keys: list[str], sizes: list[int], budget_s: float, repeat: int | None,
                       env: dict[str, str], mechanism: str) -> None:
    torch, dist, n = ctx.torch, ctx.dist, ctx.size
    launch = {"launch": "rank_per_gpu", "gpus": ",".join(str(i) for i in range(n))}
    ends = (endpoint("gpu", 0, "device", ctx.node, 0), endpoint("gpu", 1, "device", ctx.node, 1))
    for key, direction in (("torch.bandwidth", "uni"), ("torch.pingpong", "half_round_trip")):
        if key not in keys:
            continue
        operation = "send_recv" if direction == "uni" else "ping_pong"
        movement = {"operation": operation, "direction": direction, "mechanism": mechanism, "from": ends[0],
                    "to": ends[1], "choices": {"launch": "rank_per_gpu"}, "same_node": True}
        params = {**launch, "direction": direction}
        for size in sorted((s for s in sizes if direction == "uni" or s <= PINGPONG_LARGEST), reverse=True):
            identity = base(key, params, movement, size, n, repeat, env)
            message = pattern_bytes(torch, size, ctx.device)
            inbox = torch.empty(size, dtype=torch.uint8, device=ctx.device)
            if direction == "uni":
                def op() -> None:
                    if ctx.rank == 0:
                        dist.send(message, 1)
                    elif ctx.rank == 1:
                        dist.recv(inbox, 0)
                what, includes = "dist.send (rank 0) / dist.recv (rank 1) calls", ""
            else:
                def op() -> None:
                    if ctx.rank == 0:
                        dist.send(message, 1)
                        dist.recv(inbox, 1)
                    elif ctx.rank == 1:
                        dist.recv(inbox, 0)
                        dist.send(inbox, 0)
                what = "round trips of dist.send/dist.recv"
                includes = f"half a round trip of dist.send/dist.recv between ranks 0 and 1 ({ctx.members}), launches included"
            per_op, ops = measure(ctx, op, lambda: inbox.fill_(POISON), budget_s, max_over_ranks=direction == "uni")
            if direction != "uni":
                per_op = [t / 2 for t in per_op]
            detail = first_difference(torch, inbox, message) if ctx.rank in (0, 1) and (direction != "uni" or ctx.rank == 1) else ""
            checks = ctx.gather((not detail, detail))
            bad = [(r, d) for r, (ok, d) in enumerate(checks) if not ok]
            check = (not bad, size * (1 if direction == "uni" else 2), f"rank {bad[0][0]}: {bad[0][1]}" if bad else "")
            ranks_text = ("; per sample the slowest rank's time" if direction == "uni" else "; rank 0's clock, halved") + \
                (f"; one process per GPU ({n})" if ctx.cuda else f"; {n} processes")
            if ctx.rank == 0:
                emit(result(identity, per_op, float(size), timing_text(ctx, what, ops, ranks_text), ops, check, "bytes",
                            includes, direction == "uni"))
            del message, inbox


# --- DDP training step --------------------------------------------------------------------------------

PROFILED_STEPS = 3


def nccl_kernel_seconds(torch: Any, prof: Any) -> float:
    """GPU time of the NCCL kernels a profile saw: in a DDP step the only communication is the
    gradient all-reduce (whatever kernel NCCL picks for it: named per collective, or generic)."""
    total_us = 0.0
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and event.name.lower().startswith("nccl"):
            total_us += event.time_range.elapsed_us()
    return total_us / 1e6


def run_ddp(ctx: Context, keys: list[str], buckets: list[int], steps: int, batch: int, sequence: int,
            repeat: int | None, env: dict[str, str], mechanism: str, layers: int | None = None) -> None:
    torch, n = ctx.torch, ctx.size
    from torch.nn.parallel import DistributedDataParallel  # deliberate: torch is optional; imported only where the suite runs

    from commatlas.frameworks.torch.model import GPT2_SMALL, Gpt, GptShape, parameter_count  # deliberate: the model imports torch, which is optional

    shape = GPT2_SMALL if layers is None else GptShape(layers=layers)
    every = endpoint("gpu", None, "device", ctx.node)
    tokens_gen = torch.Generator(device=ctx.device).manual_seed(1000 + ctx.rank)  # each rank its own tokens
    tokens = torch.randint(shape.vocabulary, (batch, sequence + 1), device=ctx.device, generator=tokens_gen)
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    def autocast() -> Any:
        return torch.autocast("cuda", dtype=torch.bfloat16) if ctx.cuda else nullcontext()

    def build(cap: int) -> tuple[Any, Any, int]:
        torch.manual_seed(0)
        model = Gpt(shape).to(ctx.device)
        count = parameter_count(model)
        ddp = DistributedDataParallel(model, device_ids=[ctx.device.index] if ctx.cuda else None, bucket_cap_mb=cap)
        optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4, **({"fused": True} if ctx.cuda else {}))
        return ddp, optimizer, count

    def step(ddp: Any, optimizer: Any, sync: bool) -> None:
        with (nullcontext() if sync else ddp.no_sync()):
            with autocast():
                loss = ddp(x, y)
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def timed(ddp: Any, optimizer: Any, sync: bool) -> list[float]:
        for _ in range(3):
            step(ddp, optimizer, sync)
        start = ctx.timer()
        per_step = []
        for _ in range(steps):
            ctx.barrier()
            stop = start()
            step(ddp, optimizer, sync)
            per_step.append(stop())
        return ctx.agree_max(per_step)

    what = (f"one training step (forward, backward, {'fused ' if ctx.cuda else ''}AdamW) of a {shape.layers}-layer GPT "
            f"on {batch}x{sequence} tokens per rank" + (", bf16 autocast" if ctx.cuda else ", float32"))
    # The baseline without all-reduce once (it does not depend on the buckets), where the step is asked for.
    baseline = [(25 if 25 in buckets else buckets[0], False)] if "torch.ddp_step" in keys else []
    plan = [(cap, True) for cap in buckets] + baseline
    for cap, sync in plan:
        ddp, optimizer, count = build(cap)
        gradient = 4 * count
        params = {"model": f"gpt2-{shape.layers}l", "batch": batch, "sequence": sequence, "bucket_cap_mb": cap,
                  "gradient_sync": sync}
        movement = {"operation": "bucketed_allreduce", "direction": "all_to_all", "mechanism": mechanism,
                    "from": every, "to": every, "participants": n,
                    "choices": {"bucket_cap_mb": cap, "gradient_sync": sync}, "same_node": True}
        if not sync:
            # The baseline moves nothing between GPUs: it says so, and as the DDP step's reference it
            # stays out of the map (a step without all-reduce is no way to all-reduce).
            movement.update(operation="nothing", direction="none", reference_of="torch.ddp_step")
        identity = base("torch.ddp_step", params, movement, gradient, n, repeat, env)
        per_step = timed(ddp, optimizer, sync)
        if sync:
            # Each rank trained on its own tokens: only all-reduced gradients leave every rank
            # with the same parameters after the timed steps.
            with torch.no_grad():
                digest = float(sum(p.detach().double().sum() for p in ddp.parameters()).item())
            digests = ctx.gather(digest)
            same = all(d == digests[0] for d in digests)
            check = (same, gradient, "" if same else f"parameters differ across ranks after the steps: {digests}")
            verify, includes = "replicas", f"{what}; DDP all-reduces the gradient in buckets of {cap} MB"
        else:
            check, verify = (True, 0, ""), "none"
            includes = f"{what}; under ddp.no_sync(): no gradient all-reduce (the step's compute alone)"
        if ctx.rank == 0:
            method = (("CUDA events on the current stream" if ctx.cuda else "host perf_counter")
                      + " around one training step per sample, after 3 untimed steps; per sample the slowest "
                      f"rank's time; {n} {'processes, one per GPU' if ctx.cuda else 'processes'}; {ctx.versions}")
            measurement = {"type": "result", **identity, "time": round(time.time(), 3), "samples_s": per_step,
                           "bytes_per_op": float(gradient),
                           "timing": {"method": method, "ops_per_sample": 1, "warmup_samples": 3, "max_over_ranks": True},
                           "latency_includes": includes,
                           "verified": {"ok": check[0], "bytes_checked": check[1], "method": verify,
                                        **({"detail": check[2]} if check[2] else {})}}
            if "torch.ddp_step" in keys:
                emit(measurement)
        if sync and "torch.ddp_allreduce" in keys:
            allreduce_in_step(ctx, ddp, optimizer, step, cap, params, movement, gradient, repeat, env, what)
        del ddp, optimizer
        if ctx.cuda:
            torch.cuda.empty_cache()


def allreduce_in_step(ctx: Context, ddp: Any, optimizer: Any, step: Callable[..., None], cap: int,
                      params: dict[str, Any], movement: dict[str, Any], gradient: int, repeat: int | None,
                      env: dict[str, str], what: str) -> None:
    """The gradient all-reduce's own GPU time inside the step, from torch.profiler: one profiled
    step per sample, after the timed ones (the profiler's cost stays out of the step's figure)."""
    torch, n = ctx.torch, ctx.size
    identity = base("torch.ddp_allreduce", params, movement, gradient, n, repeat, env)
    if not ctx.cuda:
        if ctx.rank == 0:
            emit({"type": "skip", **identity, "reason": "profiles NCCL kernels: CUDA only"})
        return
    per_step, why = [], ""
    try:
        from torch.profiler import ProfilerActivity, profile  # deliberate: the profiler only for the profiled steps
        for _ in range(PROFILED_STEPS):
            ctx.barrier()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step(ddp, optimizer, True)
                torch.cuda.synchronize()
            per_step.append(nccl_kernel_seconds(torch, prof))
    except Exception as e:  # noqa: BLE001 (the profiler's failure is this point's skip, not the run's)
        why = f"torch.profiler failed: {type(e).__name__}: {e}"
    # Every rank agrees on whether there is a figure before the next collective.
    failed = ctx.agree_max([1.0 if why or not per_step or min(per_step) <= 0 else 0.0])[0] > 0
    if failed:
        if ctx.rank == 0:
            emit({"type": "skip", **identity,
                  "reason": why or "the profiler saw no NCCL kernel in the step (CUDA activity not recorded?)"})
        return
    per_step = ctx.agree_max(per_step)
    with torch.no_grad():
        digest = float(sum(p.detach().double().sum() for p in ddp.parameters()).item())
    digests = ctx.gather(digest)
    same = all(d == digests[0] for d in digests)
    if ctx.rank == 0:
        emit({"type": "result", **identity, "time": round(time.time(), 3), "samples_s": per_step,
              "bytes_per_op": float(gradient),
              "timing": {"method": "torch.profiler (CUDA activity) around one training step per sample, after the "
                                   "timed steps: the GPU time of every NCCL kernel in the step, summed; per sample the "
                                   f"slowest rank's; {n} processes, one per GPU; {ctx.versions}",
                         "ops_per_sample": 1, "warmup_samples": 0, "max_over_ranks": True},
              "latency_includes": (f"the NCCL kernels' GPU time in {what}, DDP's gradient all-reduce in buckets of "
                                   f"{cap} MB, overlapping the backward pass where it does"),
              "verified": {"ok": same, "bytes_checked": gradient, "method": "replicas",
                           **({} if same else {"detail": f"parameters differ across ranks: {digests}"})}})


# --- entry ----------------------------------------------------------------------------------------------

def skip_all(keys: list[str], reason: str, ranks: int, repeat: int | None, env: dict[str, str]) -> None:
    for key in keys:
        emit({"type": "skip", **base(key, {}, BY_KEY[key].movement(), None, ranks, repeat, env), "reason": reason})


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m commatlas.frameworks.torch.worker")
    p.add_argument("--part", choices=("copy", "dist"), required=True)
    p.add_argument("--keys", required=True, help="comma-separated torch.* keys to measure")
    p.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    p.add_argument("--time-budget", type=float, default=0.05)
    p.add_argument("--buckets", default=",".join(str(b) for b in DEFAULT_BUCKETS))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--sequence", type=int, default=1024)
    p.add_argument("--layers", type=int, default=None, help="fewer layers (tests on CPU)")
    p.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    p.add_argument("--repeat-index", type=int, default=None)
    p.add_argument("--record-env", default="")
    p.add_argument("--time-limit", type=float, default=900.0,
                   help="seconds before a stuck worker prints where it is and exits (a hung NCCL call)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    apply_fixed_environment()
    args = parse(sys.argv[1:] if argv is None else argv)
    # A collective that never completes would hold the run for ever: past the limit every thread's
    # stack goes to stderr (the run's log) and the process exits, which ends the launcher's job.
    faulthandler.dump_traceback_later(args.time_limit, exit=True)
    keys = [k for k in args.keys.split(",") if k]
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown:
        print(f"torch worker: error: unknown benchmark {unknown[0]}", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",") if s]
    env = {name: os.environ.get(name, "(unset)") for name in args.record_env.split(",") if name}
    rank, size, local = environment_rank()
    ranks = 1 if args.part == "copy" else size
    try:
        import torch  # deliberate: torch is optional; imported only where the suite runs
    except ImportError as e:
        if rank == 0:
            skip_all(keys, f"PyTorch cannot be imported ({e})", ranks, args.repeat_index, env)
        return 0
    if (args.backend == "nccl" or args.part == "copy") and not torch.cuda.is_available():
        if rank == 0:
            skip_all(keys, f"PyTorch {torch.__version__} sees no CUDA GPU (torch.cuda.is_available() is false)",
                     ranks, args.repeat_index, env)
        return 0
    if args.part == "copy":
        run_copies(Context(torch, torch.device("cuda", 0)), sizes, args.time_budget, args.repeat_index, env)
        return 0
    if size < 2:
        skip_all(keys, "needs 2 or more processes, one per GPU (run under the MPI launcher)", size,
                 args.repeat_index, env)
        return 0
    import torch.distributed as dist  # deliberate: torch is optional; imported only where the suite runs
    if args.backend == "nccl":
        if local >= torch.cuda.device_count():
            print(f"torch worker: error: local rank {local} has no GPU ({torch.cuda.device_count()} visible)",
                  file=sys.stderr)
            return 1
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    address = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = os.environ.get("MASTER_PORT", "29500")
    extra = {"device_id": device} if args.backend == "nccl" else {}
    dist.init_process_group(args.backend, init_method=f"tcp://{address}:{port}", rank=rank, world_size=size, **extra)
    mechanism = "torch_nccl" if args.backend == "nccl" else "torch_gloo"  # gloo: tests of the plumbing only
    try:
        ctx = Context(torch, device, rank, size, dist)
        run_collectives(ctx, keys, sizes, args.time_budget, args.repeat_index, env, mechanism)
        run_point_to_point(ctx, keys, sizes, args.time_budget, args.repeat_index, env, mechanism)
        if "torch.ddp_step" in keys or "torch.ddp_allreduce" in keys:
            run_ddp(ctx, keys, [int(b) for b in args.buckets.split(",") if b], args.steps, args.batch, args.sequence,
                    args.repeat_index, env, mechanism, args.layers)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
