"""The progress line reads the engine's events: the figure a benchmark is about, or its status."""

from __future__ import annotations

from commatlas.run.progress import describe_point, parse_event


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

    from commatlas.run.progress import PhaseProgress

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


def test_osu_reference_counts_its_tests_at_80_columns() -> None:
    """Was "OSU-method reference ━━━ 0/? 0:00:01 eta": the reference prints figures, not progress
    events. Its real output (the committed H100 run's engine.log, tests/fixtures/h100-atlas-default)
    now counts tests × sizes."""
    import io

    from rich.console import Console

    from commatlas.analysis import osu
    from commatlas.run.progress import PhaseProgress
    from conftest import fixture_run

    log_path = fixture_run("h100-atlas-default") / "default" / "engine.log"
    lines = log_path.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "commatlas-osu-ref" in line and line.startswith("$ "))
    command = lines[start].split()
    tests = command[command.index("--tests") + 1].split(",")
    sizes = [int(s) for s in command[command.index("--sizes") + 1].split(",")]
    passes = int(command[command.index("--passes") + 1]) if "--passes" in command else 1  # this run: one
    output = [line for line in lines[start + 1:] if line.startswith('{"test"')]
    assert len(output) == osu.reference_total(tests, sizes, passes) == 15
    assert osu.reference_total(tests, sizes) == 15 * osu.PASSES  # what a run asks of it now
    screen, log = io.StringIO(), io.StringIO()
    with PhaseProgress(Console(file=screen, width=80, force_terminal=False)) as progress:
        progress.follow("OSU method", iter(["[vm:1] launcher noise\n", *output]), log,
                        osu.PROGRESS_METRICS, total=osu.reference_total(tests, sizes, passes), point_of=osu.progress_point)
    shown = screen.getvalue().splitlines()[-1]
    assert "15/15" in shown and "?" not in shown, shown
    assert "osu_bibw 1 MiB 10.7 GB/s" in shown, shown
    assert len(shown.rstrip()) <= 80
    assert log.getvalue() == "[vm:1] launcher noise\n" + "".join(output)  # the figures stay in the log


def test_osu_reference_latency_point_shows_time() -> None:
    from commatlas.analysis import osu

    line = '{"test":"osu_latency","bytes":1,"latency_us":0.453482,"seconds":0.00906965,"iterations":10000,' \
           '"skip":100,"verified":true,"bytes_checked":2}'
    assert describe_point(osu.progress_point(line), osu.PROGRESS_METRICS["osu_latency"]) == "osu_latency 1 B 453 ns"
    assert osu.progress_point("[vm:1] noise") is None
