"""The `commatlas` command. Each subcommand is one function registered in COMMANDS with the
@command decorator (its options come from the `arguments` function it names); adding one is
adding a function here.

Every failure becomes one line on stderr, `commatlas: error: ...`, exit status 2 for bad input
and 1 for failures; a traceback never reaches the user.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NoReturn

from rich.console import Console

from commatlas import __version__
from commatlas.analysis.osu import with_references
from commatlas.errors import CommatlasError, UsageError
from commatlas.frameworks.torch.catalog import listed
from commatlas.io.engine import Engine, backend_reason, gpu_backend, gpu_count
from commatlas.io.outputs import check_dir_target, check_file_target, write_failure
from commatlas.report.topology import render as render_topology
from commatlas.report.views import print_benchmarks, print_info
from commatlas.run.launcher import physical_cores
from commatlas.run.presets import PRESETS, preset, presets_table
from commatlas.run.resume import stored_options
from commatlas.run.selection import Selection, split_list
from commatlas.run.sweep import parse_sweeps

if TYPE_CHECKING:
    from commatlas.run.execute import RunOptions

# The commands that read or measure results import what they need when they run (the marked
# imports below): numpy and matplotlib take seconds to load on a small machine, and `list`,
# `info`, `topo` and a mistyped option must answer without them.

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Handler


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, arguments: Callable[[argparse.ArgumentParser], None] = lambda p: None):
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = Command(name, help, arguments, handler)
        return handler

    return register


class OneLineParser(argparse.ArgumentParser):
    """argparse prints usage and exits; we want our one-line error instead."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def stdout_console() -> Console:
    return Console(highlight=False)


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False)


# --- run ----------------------------------------------------------------------------------------

def run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", help="comma-separated suites: host, gpu, nccl, mpi, mpi-gpu or all "
                                   "(default: what this machine has)")
    p.add_argument("--only", action="append", default=[], help="benchmark keys or globs, comma-separated (repeatable)")
    p.add_argument("--exclude", action="append", default=[], help="benchmark keys or globs to leave out")
    p.add_argument("--sizes", help="message sizes: '4096', '8:1G' (doubling), '8:1G:x4', '1M:16M:+1M', combined with commas")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="timed seconds per point at most (default 0.1; 0.2 with --precision off; 0.02 with --quick)")
    p.add_argument("--out", type=Path, metavar="DIR", help="run directory (default: commatlas-results/<UTC time>-<host>/)")
    p.add_argument("--quick", action="store_true", help="few sizes and a small budget: a smoke run")
    p.add_argument("--precision", metavar="X|off",
                   help="sample each point until its median's 95%% interval is within +-X (default 0.005); "
                        "'off': fill the time budget (default then 0.2 s)")
    p.add_argument("--full", action="store_true",
                   help="also the full tier: variants that repeat a default one within noise (docs/tiers.md)")
    p.add_argument("--ranks", metavar="N|all|N,all",
                   help="ranks of the MPI phase (default: one per GPU, at least 2); 'all': one per core of "
                        "the node, each bound to its core; several, comma-separated: the MPI phase once per count")
    p.add_argument("--mpi", metavar="LIBRARIES",
                   help="run the MPI phases once per MPI library, each under its own mpiexec: names "
                        "(openmpi,mpich,mvapich,cray-mpich) or engine paths; see scripts/build_mpi_engines.sh")
    p.add_argument("--launcher", metavar="COMMAND", help="launcher line used verbatim for MPI phases, e.g. 'srun -N 2 --ntasks-per-node 4'")
    p.add_argument("--threads", type=int, help="worker threads of multi-threaded host benchmarks (default: all cores)")
    p.add_argument("--numa", metavar="LIST", help="NUMA nodes to place host buffers on, e.g. 0,1")
    p.add_argument("--watchdog", type=float, metavar="SECONDS",
                   help="stop the job when one point runs longer than this (engine default 120; 0 = off)")
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="measure the whole selection K times: the report shows run-to-run variation")
    p.add_argument("--sweep-env", action="append", default=[], metavar="NAME=V1,V2",
                   help="run once per value of this variable (repeatable: every combination), "
                        "e.g. NCCL_ALGO=Ring,Tree")
    p.add_argument("--tune", choices=tuple(PRESETS), metavar="PRESET",
                   help="sweep a preset of tuning variables one at a time (nccl, mpi, glibc: see `commatlas list --tune`); "
                        "the report says which setting was best per movement and size")
    p.add_argument("--soak", metavar="DURATION",
                   help="repeat one benchmark (--only KEY) at one size (--sizes N) for this long ('60s', '5m'), "
                        "keeping every iteration: the report shows noise over time")
    p.add_argument("--resume", type=Path, metavar="RUN_DIR",
                   help="continue an interrupted run: measure only the points it does not have yet")


def parse_ranks(text: str | None) -> tuple[int | None, tuple[int, ...]]:
    """--ranks: the first count, and every count when there are several or 'all' is one ('all':
    every core of this node, so each rank is bound to one of its own)."""
    if text is None:
        return None, ()
    counts: list[int] = []
    every_core = False
    for item in text.split(","):
        item = item.strip().lower()
        if item == "all":
            every_core = True
            count = physical_cores()
        else:
            try:
                count = int(item)
            except ValueError:
                raise UsageError(f"--ranks '{text}': give a number of ranks, 'all', or both comma-separated (2,all)") from None
        if count not in counts:
            counts.append(count)
    return counts[0], (tuple(counts) if every_core or len(counts) > 1 else ())


def joined(values: list[str]) -> tuple[str, ...]:
    return tuple(item for value in values for item in split_list(value))


@command("run", "measure: run the benchmark suites into a run directory", run_arguments)
def cmd_run(args: argparse.Namespace) -> int:
    from commatlas.run.execute import RunOptions, execute  # deliberate: numpy, loaded by the commands that need it

    suites = split_list(args.suite) if args.suite is not None else None
    # The engine reads an empty list as "not given"; here it can only be a mistake.
    for flag, value in (("--suite", args.suite), ("--sizes", args.sizes), ("--numa", args.numa),
                        *(("--only", v) for v in args.only), *(("--exclude", v) for v in args.exclude)):
        if value is not None and not split_list(value):
            raise UsageError(f"{flag} is empty")
    only = joined(args.only)
    sweep_env = parse_sweeps(args.sweep_env)
    if args.tune is not None:
        if sweep_env:
            raise UsageError("--tune and --sweep-env both choose the passes: give one of them")
        chosen = preset(args.tune)
        if suites is None and not only:
            only = chosen.only  # what the preset's knobs act on
        # Kept as the run's sweep (meta record, --resume); the preset runs its values one at a time.
        sweep_env = chosen.sweeps()
    ranks, rank_counts = parse_ranks(args.ranks)
    if args.mpi is not None and not split_list(args.mpi):
        raise UsageError("--mpi is empty")
    options = RunOptions(
        selection=Selection(suites, only, joined(args.exclude)),
        sizes=args.sizes, time_budget=args.time_budget, quick=args.quick, threads=args.threads,
        numa=args.numa, watchdog=args.watchdog, ranks=ranks, launcher=args.launcher, out=args.out,
        repeat=args.repeat, sweep_env=sweep_env, tune=args.tune,
        precision=args.precision, full=args.full, soak=soak_seconds(args),
        rank_counts=rank_counts, mpi=args.mpi,
    )
    if args.resume is not None:
        options = options_to_resume(options, args.resume)
    return execute(options, Engine.find(), stdout_console(), stderr_console(), args.resume)


def soak_seconds(args: argparse.Namespace) -> float | None:
    """--soak DURATION in seconds; a soak is one time series, so one benchmark at one size."""
    from commatlas.analysis.multinode import parse_duration  # deliberate: numpy, loaded by the commands that need it

    if args.soak is None:
        return None
    try:
        seconds = parse_duration(args.soak)
    except ValueError:
        raise UsageError(f"--soak needs a duration such as 60, 60s or 5m, got '{args.soak}'") from None
    only = joined(args.only)
    if len(only) != 1 or any(c in only[0] for c in "*?["):
        raise UsageError("--soak needs --only with exactly one benchmark key")
    if args.sizes is None or len(split_list(args.sizes)) != 1 or ":" in args.sizes:
        raise UsageError("--soak needs --sizes with exactly one size")
    if args.repeat != 1 or args.sweep_env:
        raise UsageError("--soak takes neither --repeat nor --sweep-env")
    return seconds


def options_to_resume(given: "RunOptions", run_dir: Path) -> "RunOptions":
    """`--resume DIR` alone takes the run's own options; options given with it must match them
    (checked in commatlas.run.resume once the engine is known)."""
    from commatlas.run.execute import RunOptions  # deliberate: numpy, loaded by the commands that need it

    if given.out is not None:
        raise UsageError("--resume continues RUN_DIR itself: --out cannot be given with it")
    if given != RunOptions(Selection(None, (), ()), None, None, False, None, None, None, None, None, None):
        return given
    stored = stored_options(run_dir)
    try:
        return RunOptions.from_meta(stored)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise UsageError(f"--resume {run_dir}: its meta record's options cannot be read ({e})") from None


# --- list, info, topo ---------------------------------------------------------------------------

def json_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the engine's JSON instead of a table")


def print_json(value: object) -> None:
    print(json.dumps(value, indent=2))


def list_arguments(p: argparse.ArgumentParser) -> None:
    json_argument(p)
    p.add_argument("--tune", action="store_true", help="list the tuning presets of `run --tune` and their values")


@command("list", "list the benchmarks of this build and whether each can run here", list_arguments)
def cmd_list(args: argparse.Namespace) -> int:
    if args.tune:
        table = presets_table(make() for make in PRESETS.values())
        if args.json:
            print_json(table)
        else:
            console = stdout_console()
            for p in table:
                console.print(f"[bold]--tune {p['preset']}[/bold]: {p['passes']} passes, selects "
                              f"{', '.join(p['selects'])}{' (' + p['note'] + ')' if p['note'] else ''}")
                for k in p["knobs"]:
                    console.print(f"  {k['name']}: {', '.join(k['values'])}  [dim]{k['why']}[/dim]")
        return 0

    engine = Engine.find()
    topology = engine.topology()
    benchmarks = with_references(engine.benchmarks(), engine.path) + listed(gpu_count(topology))
    if args.json:
        print_json(benchmarks)
    else:
        print_benchmarks(stdout_console(), benchmarks, topology)
    return 0


@command("info", "show the engine build, the host, and which backends are built (or why not)", json_argument)
def cmd_info(args: argparse.Namespace) -> int:
    info = Engine.find().info()
    if args.json:
        print_json(info)
    else:
        print_info(stdout_console(), info)
    return 0


@command("topo", "show the GPU topology and the theoretical bandwidth of every path", json_argument)
def cmd_topo(args: argparse.Namespace) -> int:
    engine = Engine.find()
    topology = engine.topology()
    if args.json:
        print_json(topology)
        return 0
    reason = ""
    if topology is None:
        info = engine.info()
        reason = f"this engine has no topo command: {backend_reason(info, gpu_backend(info))}"
    render_topology(stdout_console(), topology, reason)
    return 0


# --- report, compare, export (commatlas.report, commatlas.analysis.compare) ---------------------

def report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (or its results.jsonl)")
    p.add_argument("--out", metavar="DIR", help="where to write report.html and summary.md (default: RUN_DIR)")
    p.add_argument("--allocator", metavar="NAME",
                   help="the allocator of the fixed-allocator map (default: each movement's fastest)")
    p.add_argument("--library", metavar="NAME",
                   help="the MPI library of the fixed-library map, where a run holds several (default: each movement's fastest)")


@command("report", "write report.html (self-contained) and summary.md for a run", report_arguments)
def cmd_report(args: argparse.Namespace) -> int:
    from commatlas.io.results import load_run  # deliberate: numpy, loaded by the commands that need it
    from commatlas.report import write_report  # deliberate: matplotlib, loaded by the commands that need it

    out = Path(args.out) if args.out else load_run(args.run_dir).directory
    check_dir_target(out)
    try:
        paths = write_report(args.run_dir, args.out, args.allocator, args.library)
    except OSError as e:
        raise write_failure(Path(e.filename) if e.filename else out, e) from None
    stdout_console().print(f"report: {paths.html}\nsummary: {paths.markdown}")
    return 0


def compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", metavar="RUN", nargs="+", help="run directories; the first is the baseline; RUN@LIBRARY: only that MPI library's records (RUN@openmpi RUN@mpich)")
    p.add_argument("--html", metavar="FILE", type=Path,
                   help="HTML output (default: compare.html in the last run's directory)")


@command("compare", "compare runs: metadata differences, then ratios per point, judged against the noise",
         compare_arguments)
def cmd_compare(args: argparse.Namespace) -> int:
    from commatlas.analysis.compare import compare_runs  # deliberate: numpy, loaded by the commands that need it
    from commatlas.report.comparison import print_comparison, write_comparison_html  # deliberate: as above

    if args.html is not None:
        check_file_target(args.html)  # before the runs are read: a typo costs nothing
    comparisons = compare_runs(args.runs)
    print_comparison(comparisons, stdout_console())
    stdout_console().print(f"html: {write_comparison_html(comparisons, args.html)}")
    return 0


def check_order_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a finished run directory (or its results.jsonl)")
    p.add_argument("--only", action="append", default=[], help="the run's benchmarks to re-measure: keys or globs, "
                                                               "comma-separated (default: all)")
    p.add_argument("--exclude", action="append", default=[], help="benchmark keys or globs to leave out")
    p.add_argument("--sizes", help="measure alone at these sizes only (default: the run's); same syntax as run's")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="timed seconds per point alone (default: the run's)")
    p.add_argument("--out", type=Path, metavar="DIR", help="where the jobs alone and order-check.json go "
                                                          "(default: RUN_DIR/order-check/)")
    p.add_argument("--rounds", type=int, default=1, metavar="N",
                   help="measure each benchmark alone in N fresh jobs (default 1); their spread sets the tolerance, "
                        "so a point that varies from job to job is not taken for an order dependence")
    p.add_argument("--in-order", action="store_true",
                   help="each round also runs the checked benchmarks after what ran before them in the run, in one "
                        "job: the run's side gets its own job-to-job spread, so a state that moves between identical "
                        "jobs is not taken for an order dependence")


@command("check-order", "re-measure each benchmark of a run in a job of its own and say which points "
                        "differ from the run beyond compare's tolerance (exit 1 when one does)",
         check_order_arguments)
def cmd_check_order(args: argparse.Namespace) -> int:
    from commatlas.run.order_check import check_order, print_check  # deliberate: numpy, loaded by the commands that need it

    for flag, value in (("--sizes", args.sizes), *(("--only", v) for v in args.only),
                        *(("--exclude", v) for v in args.exclude)):
        if value is not None and not split_list(value):
            raise UsageError(f"{flag} is empty")
    check = check_order(args.run_dir, joined(args.only), joined(args.exclude), args.sizes, args.time_budget,
                        args.out, console=stderr_console(), rounds=args.rounds, in_order=args.in_order)
    print_check(check, stdout_console())
    return check.exit_status


def export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (or its results.jsonl)")
    p.add_argument("--out", metavar="FILE", help="output file (default: RUN_DIR/results.csv; - for stdout)")


@command("export", "export a run's results as CSV", export_arguments)
def cmd_export(args: argparse.Namespace) -> int:
    from commatlas.report.export import export_csv  # deliberate: numpy, loaded by the commands that need it

    path = export_csv(args.run_dir, args.out)
    if path is not None:
        stderr_console().print(f"csv: {path}")
    return 0


# --- entry point --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="commatlas", description="GPU communication characterization: every path, "
                                                         "every interface, every size, verified.")
    parser.add_argument("--version", action="version", version=f"commatlas {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
    for cmd in COMMANDS.values():
        cmd.arguments(sub.add_parser(cmd.name, help=cmd.help, description=cmd.help))
    return parser


def one_line(message: str) -> str:
    """Escapes what would break the one-line promise (a newline inside a user's pattern)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        if not (sys.argv[1:] if argv is None else argv):
            # Nothing asked: the commands are the answer (on stderr, exit 2, as for a missing argument).
            parser.print_help(sys.stderr)
            return 2
        args = parser.parse_args(argv)
        return COMMANDS[args.command].handler(args)
    except CommatlasError as e:
        print(f"commatlas: error: {one_line(str(e))}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("commatlas: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # noqa: BLE001 - a bug still ends in one line; COMMATLAS_DEBUG=1 shows where
        if os.environ.get("COMMATLAS_DEBUG"):
            raise
        print(f"commatlas: error: internal error: {type(e).__name__}: {e} (COMMATLAS_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
