"""`commatlas topo`: the GPU topology as a matrix like `nvidia-smi topo -m`, with the theoretical
per-direction bandwidth (GB/s = 1e9 B/s) of every GPU-GPU and GPU-host path."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table

from commatlas.units import format_size


def pair_cell(pair: dict[str, Any] | None) -> str:
    if pair is None:
        return "?"
    link = pair.get("link", "none")
    peak = pair.get("peak_gbps")
    rate = f" {peak:.0f}" if peak else ""
    if link == "nvlink":
        return f"NV{pair.get('nvlink_links', '?')}{rate}"
    if link == "xgmi":  # AMD Infinity Fabric; 0 links: routed through another GPU
        return f"xGMI{pair.get('xgmi_links', '?')}{rate}"
    if link == "pcie":
        return f"PCIe{rate}"
    return "none"


def host_link_gbps(topology: dict[str, Any], gpu: dict[str, Any]) -> float | None:
    """Per-GPU PCIe peak: from host_links (a list, or a list of {gpu, peak_gbps}, or a map), else
    from the GPU's own PCIe facts."""
    index = gpu.get("index")
    links = topology.get("host_links")
    if isinstance(links, dict):
        value = links.get(str(index), links.get(index))
        if isinstance(value, dict):
            return value.get("peak_gbps")
        if value is not None:
            return value
    if isinstance(links, list):
        for position, entry in enumerate(links):
            if isinstance(entry, dict) and entry.get("gpu", position) == index:
                return entry.get("peak_gbps")
            if not isinstance(entry, dict) and position == index:
                return entry
    return (gpu.get("pcie") or {}).get("peak_gbps")


def matrix_table(topology: dict[str, Any]) -> Table:
    gpus = topology["gpus"]
    pairs = {(p["src"], p["dst"]): p for p in topology.get("pairs", [])}
    table = Table(title="GPU topology (cells: link, theoretical GB/s per direction)", title_justify="left")
    table.add_column("")
    for gpu in gpus:
        table.add_column(f"GPU{gpu['index']}", justify="center")
    for column in ("Host (PCIe)", "CPU affinity", "NUMA"):
        table.add_column(column, justify="center")
    for src in gpus:
        cells = ["X" if src["index"] == dst["index"] else pair_cell(pairs.get((src["index"], dst["index"])))
                 for dst in gpus]
        host = host_link_gbps(topology, src)
        cells += [f"PCIe {host:.0f}" if host else "?", str(src.get("cpu_affinity", "-")), str(src.get("numa_node", "-"))]
        table.add_row(f"GPU{src['index']}", *cells)
    return table


def gpus_table(topology: dict[str, Any]) -> Table:
    table = Table(title="GPUs", title_justify="left")
    for column in ("GPU", "name", "PCI bus", "SMs", "memory", "HBM peak", "PCIe now / max", "copy engines"):
        table.add_column(column, overflow="fold")
    for gpu in topology["gpus"]:
        pcie = gpu.get("pcie") or {}
        hbm = gpu.get("hbm_peak_gbps")
        table.add_row(
            str(gpu["index"]), str(gpu.get("name", "-")), str(gpu.get("pci_bus_id", "-")), str(gpu.get("sm_count", "-")),
            format_size(gpu.get("memory_bytes")),
            f"{hbm:.0f} GB/s ({gpu.get('memory_clock_mhz', '?')} MHz x {gpu.get('memory_bus_width_bits', '?')} bit)" if hbm else "-",
            f"Gen{pcie.get('gen_current', '?')} x{pcie.get('width_current', '?')} / Gen{pcie.get('gen_max', '?')} x{pcie.get('width_max', '?')}",
            str(gpu.get("copy_engines", "-")),
        )
    return table


def legend(topology: dict[str, Any]) -> str:
    nvml = topology.get("nvml") or {}
    source = topology.get("source", "?")
    nvml_text = f"NVML {nvml.get('version')}" if nvml.get("available") else f"NVML unavailable: {nvml.get('reason', '?')}"
    return ("NV<n> = n NVLink links, PCIe = through the PCIe hierarchy, none = no peer path. "
            f"Facts from {source} ({nvml_text}).")


def render(console: Console, topology: dict[str, Any] | None, reason_without_topo: str) -> None:
    if topology is None:
        console.print(f"no GPU: {reason_without_topo}")
        return
    if not topology.get("gpus"):
        console.print(f"no GPU: {topology.get('reason', 'none found')}")
        return
    console.print(Group(matrix_table(topology), gpus_table(topology), legend(topology)))
