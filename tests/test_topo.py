"""`commatlas topo` from a recorded 4x H200 topology (18 NVLink4 links x 26.5625 GB/s per pair,
PCIe Gen5 x16), and the no-GPU answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from commatlas.report.topology import render
from conftest import fixture_json, run_cli, write_fake_engine


def rendered(topology, reason: str = "") -> str:
    console = Console(record=True, width=200, force_terminal=False)
    render(console, topology, reason)
    return console.export_text()


def test_h200_matrix_shows_every_nvlink_pair_with_its_peak() -> None:
    text = rendered(fixture_json("topo_4xh200.json"))
    # 18 links x 26.5625 GB/s = 478 GB/s per direction, for each of the 12 ordered pairs.
    assert text.count("NV18 478") == 12
    assert text.count(" X ") == 4
    assert text.count("PCIe 63") == 4  # Gen5 x16 after 128b/130b encoding
    assert "4814 GB/s" in text  # HBM3e: 2 x 3201 MHz x 6016 bit / 8
    assert "Gen5 x16 / Gen5 x16" in text
    assert "NVIDIA H200" in text and "NVML 12.570.124.06" in text


def test_matrix_rows_follow_gpu_order() -> None:
    lines = [line for line in rendered(fixture_json("topo_4xh200.json")).splitlines() if line.lstrip("│ ").startswith("GPU")]
    matrix_rows = [line for line in lines if "NV18" in line]
    assert len(matrix_rows) == 4
    for index, row in enumerate(matrix_rows):
        cells = [c.strip() for c in row.split("│") if c.strip()]
        assert cells[0] == f"GPU{index}"
        assert cells[1 + index] == "X"


def test_pcie_only_pair_and_missing_pair() -> None:
    topology = fixture_json("topo_4xh200.json")
    topology["gpus"] = topology["gpus"][:2]
    topology["pairs"] = [{"src": 0, "dst": 1, "link": "pcie", "peak_gbps": 63.0}]
    text = rendered(topology)
    assert "PCIe 63" in text
    assert "?" in text  # 1 -> 0 is not in the data: shown unknown, never invented


def test_no_gpu_reason() -> None:
    assert rendered({"gpus": [], "reason": "cudaGetDeviceCount: no CUDA-capable device"}).strip() == \
        "no GPU: cudaGetDeviceCount: no CUDA-capable device"
    assert rendered(None, "this engine has no topo command").strip() == "no GPU: this engine has no topo command"


def test_cli_topo_with_recorded_topology(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_with_mpi.json"), [], fixture_json("topo_4xh200.json"))
    done = run_cli("topo", env={"COMMATLAS_ENGINE": str(engine), "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("NV18 478") == 12


def test_cli_topo_without_topo_command(tmp_path: Path) -> None:
    engine = write_fake_engine(tmp_path, fixture_json("info_host_only.json"), [], None)
    done = run_cli("topo", env={"COMMATLAS_ENGINE": str(engine)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no GPU: ")
    assert "no CUDA compiler" in done.stdout


def test_cli_topo_real_engine(engine_path: Path) -> None:
    done = run_cli("topo")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.startswith("no GPU") or "GPU0" in done.stdout


def test_engine_shaped_topology_renders_the_same() -> None:
    """The topology engineer's fixture is in the engine's own JSON shape (no host_links: the
    PCIe peak comes from each GPU's pcie facts)."""
    path = Path(__file__).parent / "fixtures" / "topology" / "h200x4.json"
    if not path.exists():
        pytest.skip("no engine-shaped topology fixture in this checkout")
    import json

    text = rendered(json.loads(path.read_text()))
    assert text.count("NV18 478") == 12
    assert text.count("PCIe 63") == 4


def test_xgmi_pairs_show_their_link_count() -> None:
    from commatlas.report.topology import pair_cell

    # The pair fields the HIP engine writes from the KFD topology (engine/topology/topology_json.cpp).
    assert pair_cell({"link": "xgmi", "xgmi_links": 4, "xgmi_link_gbps": 50.0, "peak_gbps": 200.0}) == "xGMI4 200"
    assert pair_cell({"link": "xgmi", "xgmi_links": 0, "xgmi_link_gbps": 0.0, "peak_gbps": 0.0}) == "xGMI0"
