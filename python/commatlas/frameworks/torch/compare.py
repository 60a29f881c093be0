"""What PyTorch adds: each torch-suite figure beside the engine's figure for the same movement and
size (a torch copy beside the copy engine's, torch.distributed beside NCCL's with a rank per GPU),
and the DDP step beside the engine's bucketed-allreduce pattern over NCCL.

Both sides are read from the records' declared movements, never from benchmark names: the same
operation, direction, metric, places (memory, GPU, rank, and a host buffer's allocator) and
participants. Where the engine measured one movement several ways (engine_side, first touch), the
engine side is its best figure: what the framework adds over the best raw path."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Iterable

from commatlas.units import format_gbps, format_latency_us, format_size

# The engine mechanism each torch mechanism runs on underneath.
UNDERNEATH = {"torch": "copy_engine", "torch_nccl": "nccl"}


def _place(e: dict[str, Any] | None) -> tuple[Any, ...]:
    if not e:
        return ()
    return (e.get("memory"), e.get("gpu"), e.get("rank"), e.get("allocator") if e.get("memory") == "host" else None)


def _shape(r: dict[str, Any]) -> tuple[Any, ...]:
    m = r["movement"]
    return (m.get("operation"), m.get("direction"), r.get("metric"), _place(m.get("from")), _place(m.get("to")),
            m.get("participants"), r.get("bytes"))


def _results(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == "result" and r.get("movement") and r.get("stats")
            and (r.get("verified") or {}).get("ok")]


def _median(r: dict[str, Any]) -> float:
    return float(r["stats"]["median_s"])


def _engine_launch_ok(r: dict[str, Any]) -> bool:
    # torch.distributed runs a process per GPU: beside NCCL with a rank per GPU, not one process
    # driving every GPU.
    return (r["movement"].get("choices") or {}).get("launch", "rank_per_gpu") == "rank_per_gpu"


@dataclass(frozen=True)
class FrameworkRow:
    movement: str      # "host memory (pinned) -> GPU 0, copy"
    torch_benchmark: str
    engine_benchmark: str
    bytes: int
    metric: str
    torch_s: float     # median per operation
    engine_s: float
    torch_gbps: float | None
    engine_gbps: float | None

    @property
    def added_s(self) -> float:
        """Time PyTorch adds to each operation (negative: faster than the engine's figure)."""
        return self.torch_s - self.engine_s

    @property
    def ratio(self) -> float:
        return self.torch_s / self.engine_s if self.engine_s > 0 else float("inf")

    def figures(self) -> tuple[str, str]:
        if self.metric == "latency":
            return format_latency_us(self.torch_s * 1e6), format_latency_us(self.engine_s * 1e6)
        return format_gbps(self.torch_gbps or 0.0), format_gbps(self.engine_gbps or 0.0)


def _endpoint_words(e: dict[str, Any] | None) -> str:
    if not e:
        return "?"
    if e.get("memory") == "gpu":
        where = "GPU memory" if e.get("gpu") is None else f"GPU {e['gpu']}"
    else:
        where = "host memory" + (f" ({e['allocator']})" if e.get("allocator") else "")
    return (f"rank {e['rank']} " if e.get("rank") is not None else "") + where


def movement_words(r: dict[str, Any]) -> str:
    m = r["movement"]
    operation = m.get("operation", "?")
    if operation in ("copy", "send_recv", "ping_pong"):
        return f"{_endpoint_words(m.get('from'))} -> {_endpoint_words(m.get('to'))}, {operation.replace('_', ' ')}"
    return f"{operation}, {m.get('participants')} GPUs"


def framework_rows(records: Iterable[dict[str, Any]]) -> list[FrameworkRow]:
    """Every torch figure that has an engine figure for the same movement and size."""
    results = _results(records)
    engine: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}
    for r in results:
        mechanism = r["movement"].get("mechanism")
        if mechanism in UNDERNEATH.values() and _engine_launch_ok(r):
            key = (mechanism, _shape(r))
            if key not in engine or _median(r) < _median(engine[key]):
                engine[key] = r
    rows = []
    for r in results:
        mechanism = r["movement"].get("mechanism")
        if mechanism not in UNDERNEATH or r["movement"].get("operation") == "bucketed_allreduce":
            continue
        rival = engine.get((UNDERNEATH[mechanism], _shape(r)))
        if rival is None:
            continue
        rows.append(FrameworkRow(movement_words(r), r["benchmark"], rival["benchmark"], int(r["bytes"]), r["metric"],
                                 _median(r), _median(rival), r.get("bandwidth_gbps"), rival.get("bandwidth_gbps")))
    rows.sort(key=lambda x: (x.movement, x.bytes))
    return rows


@dataclass(frozen=True)
class DdpRow:
    bucket_cap_mb: int
    gradient_bytes: int
    participants: int
    step_s: float               # median step with DDP's gradient all-reduce
    compute_s: float | None     # median step under no_sync (no all-reduce), where measured
    engine_s: float | None      # the engine's bucketed allreduce of this gradient over NCCL, where measured
    engine_bucket_bytes: int | None
    kernels_s: float | None = None  # the NCCL kernels' GPU time inside the step (torch.ddp_allreduce)

    @property
    def exposed_s(self) -> float | None:
        """Step time the all-reduce adds over the step without it (what overlap did not hide)."""
        return None if self.compute_s is None else self.step_s - self.compute_s

    @property
    def share(self) -> float | None:
        return None if self.exposed_s is None or self.step_s <= 0 else self.exposed_s / self.step_s

    @property
    def busy_share(self) -> float | None:
        """The step's share during which the all-reduce's kernels ran (overlapped or not)."""
        return None if self.kernels_s is None or self.step_s <= 0 else self.kernels_s / self.step_s


def ddp_rows(records: Iterable[dict[str, Any]]) -> list[DdpRow]:
    results = _results(records)
    steps = [r for r in results if r["benchmark"] == "torch.ddp_step"]
    kernels = {(r["params"].get("bucket_cap_mb"), r["bytes"], r["movement"].get("participants")): r
               for r in results if r["benchmark"] == "torch.ddp_allreduce"}
    # The engine's pattern over NCCL with no compute beside it: the gradient's all-reduce alone.
    engine = [r for r in results if r["movement"].get("operation") == "bucketed_allreduce"
              and r["movement"].get("mechanism") == "nccl" and not (r.get("params") or {}).get("compute_us")]
    rows = []
    for s in steps:
        if not s["params"].get("gradient_sync", True):
            continue
        n = s["movement"].get("participants")
        compute = [c for c in steps if not c["params"].get("gradient_sync", True) and c["bytes"] == s["bytes"]
                   and c["movement"].get("participants") == n]
        # The engine's nearest gradient size on the same number of ranks.
        same_ranks = [e for e in engine if e["movement"].get("participants") == n]
        nearest = min(same_ranks, key=lambda e: abs(e["bytes"] - s["bytes"]), default=None)
        busy = kernels.get((s["params"].get("bucket_cap_mb"), s["bytes"], n))
        rows.append(DdpRow(int(s["params"].get("bucket_cap_mb", 0)), int(s["bytes"]), int(n or 0), _median(s),
                           _median(compute[0]) if compute else None,
                           _median(nearest) if nearest else None,
                           int(nearest["params"].get("bucket_bytes", 0)) if nearest else None,
                           _median(busy) if busy else None))
    rows.sort(key=lambda x: x.bucket_cap_mb)
    return rows


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else format_latency_us(seconds * 1e6)


def _added(row: FrameworkRow) -> str:
    sign = "+" if row.added_s >= 0 else "-"
    return f"{sign}{format_latency_us(abs(row.added_s) * 1e6)} ({row.ratio:.2f}x)"


def _tables(records: list[dict[str, Any]]) -> tuple[list[list[str]], list[list[str]], list[str]]:
    rows = framework_rows(records)
    ddp = ddp_rows(records)
    framework = [[r.movement, format_size(r.bytes), r.figures()[0], r.figures()[1], r.engine_benchmark, _added(r)]
                 for r in rows]
    step = [[str(d.bucket_cap_mb), format_size(d.gradient_bytes), _ms(d.step_s), _ms(d.compute_s), _ms(d.exposed_s),
             "-" if d.share is None else f"{100 * d.share:.0f}%",
             "-" if d.kernels_s is None else f"{_ms(d.kernels_s)} ({100 * (d.busy_share or 0):.0f}%)",
             "-" if d.engine_s is None else f"{_ms(d.engine_s)} ({format_size(d.engine_bucket_bytes or 0)} buckets)"]
            for d in ddp]
    notes = []
    if ddp and all(d.engine_s is None for d in ddp):
        notes.append("The engine's pattern.bucketed_allreduce.nccl was not measured in this run: run it at the "
                     f"gradient's size (--only pattern.bucketed_allreduce.nccl --sizes {ddp[0].gradient_bytes}) "
                     "to set the DDP step beside it.")
    return framework, step, notes


FRAMEWORK_HEADER = ["movement", "size", "PyTorch", "engine", "engine benchmark", "PyTorch adds per op"]
DDP_HEADER = ["bucket_cap_mb", "gradient", "step", "step, no all-reduce", "all-reduce exposed", "share",
              "NCCL kernels in the step", "engine: bucketed allreduce (NCCL)"]
INTRO = ("Each torch-suite figure beside the engine's best figure for the same movement and size (a PyTorch copy_ "
         "beside the copy engine; torch.distributed beside NCCL with one process per GPU). PyTorch times a loop of "
         "calls with CUDA events, launches included; the difference is what the framework adds per operation.")
DDP_INTRO = ("The DDP training step of a GPT-2-small-sized model (one process per GPU) per bucket_cap_mb: the step "
             "with DDP's gradient all-reduce, the same step under no_sync() (no all-reduce), the difference (the "
             "all-reduce time that overlap with the backward pass did not hide) and its share of the step, the GPU time "
             "of the NCCL kernels inside the step (torch.profiler; overlapped or not) and their share, beside the "
             "engine's bucketed allreduce of a gradient that size over NCCL with nothing to overlap.")


def section_markdown(records: list[dict[str, Any]]) -> str:
    framework, step, notes = _tables(records)
    if not framework and not step:
        return ""
    out = ["## What PyTorch adds", "", INTRO, ""]
    if framework:
        out += ["| " + " | ".join(FRAMEWORK_HEADER) + " |", "| --- | ---: | ---: | ---: | --- | ---: |"]
        out += ["| " + " | ".join(row) + " |" for row in framework]
        out.append("")
    if step:
        out += ["### DDP step", "", DDP_INTRO, "", "| " + " | ".join(DDP_HEADER) + " |",
                "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        out += ["| " + " | ".join(row) + " |" for row in step]
        out.append("")
    out += [*notes, ""] if notes else []
    return "\n".join(out) + "\n"


def section_html(records: list[dict[str, Any]]) -> str:
    framework, step, notes = _tables(records)
    if not framework and not step:
        return ""

    def table(header: list[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    out = ['<section id="framework"><h2>What PyTorch adds</h2>', f"<p>{html.escape(INTRO)}</p>"]
    if framework:
        out.append(table(FRAMEWORK_HEADER, framework))
    if step:
        out += ["<h3>DDP step</h3>", f"<p>{html.escape(DDP_INTRO)}</p>", table(DDP_HEADER, step)]
    out += [f"<p>{html.escape(n)}</p>" for n in notes]
    out.append("</section>")
    return "\n".join(out)
