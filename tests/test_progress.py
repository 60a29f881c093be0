"""The progress line reads the engine's events: the figure a benchmark is about, or its status."""

from __future__ import annotations

from commatlas.progress import describe_point, parse_event


def test_only_event_lines_are_events() -> None:
    assert parse_event('{"event":"start","total":3}') == {"event": "start", "total": 3}
    assert parse_event("[vm:1234] mpiexec warning: something") is None
    assert parse_event('{"not":"an event"}') is None
    assert parse_event("{broken") is None


def test_bandwidth_point() -> None:
    event = {"event": "point", "benchmark": "host.memcpy", "params": "threads=2", "bytes": 1048576,
             "status": "ok", "median_s": 1e-4, "gbps": 10.48576}
    assert describe_point(event, "bandwidth") == "host.memcpy 1 MiB 10.5 GB/s threads=2"


def test_latency_point_shows_time_not_bandwidth() -> None:
    event = {"event": "point", "benchmark": "mpi.pingpong", "params": "", "bytes": 8, "status": "ok",
             "median_s": 2.5e-6, "gbps": 0.0032}
    assert describe_point(event, "latency") == "mpi.pingpong 8 B 2.5 us"


def test_skipped_point_shows_status() -> None:
    event = {"event": "point", "benchmark": "gpu.copy_ce", "params": "", "bytes": 4096, "status": "skipped"}
    assert describe_point(event, "bandwidth") == "gpu.copy_ce 4 KiB skipped"


def test_bar_counts_points_and_keeps_other_lines_for_the_log() -> None:
    import io
    import json
    import re

    from rich.console import Console

    from commatlas.progress import PhaseProgress

    screen, log = io.StringIO(), io.StringIO()
    lines = [json.dumps({"event": "start", "total": 4}) + "\n",
             "[vm:1] a launcher warning\n",
             json.dumps({"event": "point", "done": 2, "benchmark": "host.memcpy", "bytes": 4096, "status": "ok",
                         "gbps": 3.0}) + "\n"]
    with PhaseProgress(Console(file=screen, width=200, force_terminal=False)) as progress:
        progress.follow("single process", iter(lines), log, {"host.memcpy": "bandwidth"})
    shown = screen.getvalue()
    assert "2/4" in shown and "host.memcpy 4 KiB 3 GB/s" in shown
    assert re.search(r"eta [-\d]+:[-\d]+:[-\d]+", shown), shown  # the time-left estimate (unknown yet: -:--:--)
    assert log.getvalue() == "[vm:1] a launcher warning\n"
