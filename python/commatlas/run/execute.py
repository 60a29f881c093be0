"""`commatlas run`: validate everything, then run the single-process phase and the MPI phase of
the engine into one run directory (results.jsonl framed by meta and end records, engine.log),
with a progress bar, a summary and, when available, the report."""

from __future__ import annotations

import fnmatch
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from rich.console import Console

from commatlas import STARTED

from commatlas.analysis import osu
from commatlas.analysis.multinode import hang_from_log
from commatlas.frameworks.torch import catalog as torch_catalog
from commatlas.frameworks.torch.suite import TorchPlan, run_torch_suite, unbound
from commatlas.errors import EXIT_INTERRUPTED, CommatlasError, UsageError
from commatlas.io.engine import Engine, engine_message, gpu_count
from commatlas.run.launcher import Launcher, find_launcher
from commatlas.run.mpi_libraries import MpiBuild, launcher_program, resolve_libraries
from commatlas.run.presets import MAX_PRESET_S, estimate_seconds, format_duration, preset
from commatlas.run.progress import PhaseProgress
from commatlas.run.screen import print_folded, print_whole
from commatlas.io.records import (
    ENGINE_LOG, RESULTS_FILE, append_record, drop_partial_tail, end_record, meta_record, read_records, utc_now,
)
from commatlas.run.report_hook import start_loading_writer, write_report_if_available
from commatlas.run.resume import resume_run
from commatlas.run.selection import (
    KNOWN_SUITES, MPI_SUITES, OPTIONAL_SUITES, Selection, accepts_ranks, check_ranks, is_mpi_benchmark, require_mpi, select,
    why_not_here,
)
from commatlas.report.summary import print_summary
from commatlas.run.sweep import EnvSweep, Pass, plan_passes

# A local mpiexec that has not started the engine after this long is stuck (a failed spawn);
# cluster launchers (--launcher) may wait in a queue, so they get no such limit.
STARTUP_TIMEOUT_S = 60.0
# The launcher's last lines shown on the terminal when it fails before the engine starts.
LAUNCHER_LINES_SHOWN = 8
# How long an interrupted engine (or mpiexec and its ranks) gets to stop before SIGKILL.
STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class RunOptions:
    selection: Selection
    sizes: str | None
    time_budget: float | None
    quick: bool
    threads: int | None
    numa: str | None
    watchdog: float | None
    ranks: int | None
    launcher: str | None
    out: Path | None
    repeat: int = 1                       # measure the whole selection this many times
    sweep_env: tuple[EnvSweep, ...] = ()  # once per combination of these variables' values
    precision: str | None = None          # "0.005" or "off" (engine --precision); None: the engine's
    full: bool = False                    # the full tier too (engine --full)
    tune: str | None = None               # a tuning preset (commatlas.run.presets): its knobs one at a time
    soak: float | None = None             # seconds: repeat the one point this long (noise over time)
    rank_counts: tuple[int, ...] = ()     # the MPI phase once per count (--ranks 2,all); () = `ranks` alone
    mpi: str | None = None                # --mpi: the MPI phases once per library (commatlas.run.mpi_libraries)

    def engine_arguments(self) -> list[str]:
        """Options the engine itself interprets and validates (sizes, NUMA, memory, ...)."""
        args: list[str] = []
        if self.sizes is not None:
            args += ["--sizes", self.sizes]
        if self.time_budget is not None:
            args += ["--time-budget", f"{self.time_budget:g}"]
        if self.precision is not None:
            args += ["--precision", self.precision]
        if self.quick:
            args.append("--quick")
        if self.full:
            args.append("--full")
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        if self.numa is not None:
            args += ["--numa", self.numa]
        if self.watchdog is not None:
            args += ["--watchdog", f"{self.watchdog:g}"]
        if self.soak is not None:
            args += ["--soak", f"{self.soak:g}"]
        return args

    def for_meta(self) -> dict[str, Any]:
        fields = asdict(self)
        selection = fields.pop("selection")
        fields["out"] = str(self.out) if self.out else None
        return {**{k: list(v) if v is not None else None for k, v in selection.items()}, **fields}

    @classmethod
    def from_meta(cls, stored: dict[str, Any]) -> "RunOptions":
        """The options a run was started with, from its meta record (for_meta's inverse; `out`
        is left unset, as is `soak`). TypeError, ValueError, KeyError or AttributeError when they cannot be read."""
        suites = stored.get("suites")
        return cls(
            selection=Selection(tuple(suites) if suites is not None else None, tuple(stored.get("only") or ()),
                                tuple(stored.get("exclude") or ())),
            sizes=stored.get("sizes"), time_budget=stored.get("time_budget"), quick=bool(stored.get("quick")),
            threads=stored.get("threads"), numa=stored.get("numa"), watchdog=stored.get("watchdog"),
            ranks=stored.get("ranks"), launcher=stored.get("launcher"), out=None,
            repeat=int(stored.get("repeat", 1)),
            precision=stored.get("precision"), full=bool(stored.get("full")),
            sweep_env=tuple(EnvSweep(str(s["name"]), tuple(s["values"])) for s in stored.get("sweep_env") or ()),
            tune=stored.get("tune"),
        )


@dataclass(frozen=True)
class Phase:
    title: str
    keys: tuple[str, ...]
    launcher: Launcher | None  # None: the engine runs as one plain process
    references: tuple[str, ...] = ()  # the OSU-method points run after it (osu.REFERENCE_KEYS)
    library: MpiBuild | None = None  # --mpi: the engine built against this phase's library
    gpu_context: bool = False  # its ranks hold a CUDA context from their start (osu.ranks_hold_gpu_context)

    def engine_for(self, default: Engine) -> Engine:
        return self.library.engine if self.library else default

    def command(self, engine: Engine, results: Path, engine_arguments: list[str],
                environment: dict[str, str] | None = None) -> list[str]:
        engine = self.engine_for(engine)
        program = [str(engine.path), "run", "--out", str(results), "--only", ",".join(self.keys),
                   "--progress", "json", *engine_arguments]
        if self.launcher is None:
            return program
        return self.launcher.command([*program[:2], "--mpi", *program[2:]], environment)


@dataclass(frozen=True)
class Plan:
    phases: tuple[Phase, ...]
    launcher: dict[str, Any]
    notes: tuple[str, ...] = ()  # what the user should know before reading the numbers
    suites: tuple[str, ...] = ()  # one line per suite: what runs, what is left out and why
    torch: TorchPlan | None = None  # the torch suite, run in PyTorch's own processes after the engine's


def default_run_dir() -> Path:
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    return Path("commatlas-results") / f"{stamp}-{socket.gethostname()}"


def plan_run(options: RunOptions, engine_info: dict[str, Any], topology: dict[str, Any] | None,
             benchmarks: list[dict[str, Any]], engine: Engine | None = None) -> Plan:
    if options.ranks is not None:
        if options.ranks < 1:
            raise UsageError(f"--ranks needs a positive number, got {options.ranks}")
        require_mpi("--ranks", engine_info)
    if options.launcher is not None:
        require_mpi("--launcher", engine_info)
    builds: list[MpiBuild | None] = [None]
    if options.mpi is not None:
        if engine is None:
            raise UsageError("--mpi needs the engine to find the others beside it")
        builds = list(resolve_libraries(options.mpi, engine))
        if options.launcher is not None and len(builds) > 1:
            raise UsageError("--launcher starts one library's ranks: give --mpi one library with it")
    selected = select(options.selection, benchmarks, engine_info, topology)
    torch_plan = plan_torch([b for b in selected if torch_catalog.is_torch(b)], options, topology)
    selected = [b for b in selected if not torch_catalog.is_torch(b)]
    if options.quick:
        # The OSU-method reference checks the harness: a smoke run leaves it out, unless --only
        # names it.
        named = {b["key"] for b in selected if osu.is_reference(b)
                 and any(fnmatch.fnmatchcase(b["key"], p) for p in options.selection.only)}
        selected = [b for b in selected if not osu.is_reference(b) or b["key"] in named]
    single = tuple(b["key"] for b in selected if not is_mpi_benchmark(b))
    mpi = [b for b in selected if is_mpi_benchmark(b)]
    phases = []
    if single:
        phases.append(Phase("single process", single, None))
    launcher_record: dict[str, Any] = {"kind": "none", "command": []}
    notes: tuple[str, ...] = ()
    no_launcher = ""
    quick_left_out: frozenset[str] = frozenset()
    if mpi:
        # One rank per GPU where there are GPUs; two ranks is the smallest MPI job otherwise.
        ranks = options.ranks or max(2, gpu_count(topology))
        counts = options.rank_counts or (ranks,)
        engine_mpi = [b for b in mpi if not osu.is_reference(b)]
        if options.ranks is not None and len(counts) == 1:
            # The OSU-method points run on 2 ranks only and say so in skip records otherwise.
            check_ranks(ranks, engine_mpi)
        # The OSU-method points run in their own program, after the engine benchmarks they
        # check and at their sizes: asking for one runs its benchmark too.
        references = tuple(b["key"] for b in mpi if osu.is_reference(b))
        wanted = [b["key"] for b in engine_mpi]
        wanted += [b["reference_of"] for b in mpi if osu.is_reference(b) and b["reference_of"] not in wanted]
        by_key = {b["key"]: b for b in benchmarks}
        try:
            mpi_phases = []
            for build in builds:
                # Another library's engine may be built with fewer backends (no CUDA): it runs
                # what it has.
                has = None
                if build is not None and (engine is None or build.engine.path != engine.path.resolve()):
                    has = {b["key"] for b in build.engine.benchmarks(options.engine_arguments())}
                # Whether its ranks hold a CUDA context, as its own engine says (the reference matches it).
                holds_context = build.gpu_context if build is not None else osu.ranks_hold_gpu_context(engine_info)
                for i, count in enumerate(counts):
                    # Several counts: collectives and patterns at each count they take; the rest
                    # (a ping-pong between ranks 0 and 1) at the first only, as more ranks would
                    # measure the same movement again with idle ranks beside it.
                    keys = tuple(k for k in wanted
                                 if (len(counts) == 1 or (accepts_ranks(by_key[k], count)
                                                          and (i == 0 or by_key[k].get("category") in ("collective", "pattern"))))
                                 and (has is None or k in has))
                    if not keys:
                        continue
                    extra: dict[str, Any] = {"mpiexec": launcher_program(build)} if build else {}
                    launcher = find_launcher(count, options.launcher, **extra)
                    where = f"{launcher.ranks or '?'} ranks" + (f", {build.label}" if build and len(builds) > 1 else "")
                    # The OSU-method points run on 2 ranks: after the first count's phase only.
                    mpi_phases.append(Phase(f"MPI ({where})", keys, launcher, references if i == 0 else (), build,
                                            holds_context))
        except UsageError as e:
            if mpi_was_asked_for(options, bool(single)):
                raise
            # The default run takes what the machine offers: no launcher, no MPI phase.
            no_launcher = str(e)
            launcher_record = {"kind": "none", "command": [], "reason": no_launcher}
            mpi = []
        else:
            phases += mpi_phases
            first = mpi_phases[0].launcher
            assert first is not None
            launcher_record = first.describe()
            if len(mpi_phases) > 1:
                launcher_record["phases"] = [
                    {**p.launcher.describe(), "engine": str(p.engine_for(engine).path) if engine else None,
                     "library": p.library.label if p.library else None}
                    for p in mpi_phases if p.launcher is not None]
            notes = tuple(dict.fromkeys(n for p in mpi_phases if p.launcher for n in p.launcher.notes))
            if options.quick and phases[0].launcher is None:
                phases[0], quick_left_out = quick_without_one_process_nccl(phases[0], mpi_phases, benchmarks,
                                                                           options.selection)
                if not phases[0].keys:
                    phases.pop(0)
    running = [b for b in selected if (b in mpi or not is_mpi_benchmark(b)) and b["key"] not in quick_left_out]
    # Engine benchmarks run because an OSU-method point checks them count as running too.
    brought = {key for phase in phases for key in phase.keys} - {b["key"] for b in running}
    running += [b for b in benchmarks if b["key"] in brought]
    if torch_plan is not None:
        running += [b for b in benchmarks if b["key"] in torch_plan.keys]
    suites = suite_lines(options.selection, benchmarks, running, engine_info, topology, launcher_record, no_launcher,
                         torch_plan, QUICK_NCCL_REASON if quick_left_out else "")
    return Plan(tuple(phases), launcher_record, notes, suites, torch_plan)


QUICK_NCCL_REASON = ("--quick measures NCCL with one rank per GPU (mpi-gpu), as applications run it; "
                     "--only nccl.single.* or a run without --quick measures one process driving every GPU")


def quick_without_one_process_nccl(single: Phase, mpi_phases: list[Phase], benchmarks: list[dict[str, Any]],
                                   selection: Selection) -> tuple[Phase, frozenset[str]]:
    """A smoke run pays NCCL's set-up once, not twice: where the MPI phase measures NCCL with one
    rank per GPU, the one-process NCCL suite (one thread driving every GPU: a second communicator
    and a second set-up of every ring, 1.3-1.5 s of points in a 17 s quick run on 2x H100, its
    init besides) is left out, unless --suite or --only names it. Its figures are never faster
    than one rank per GPU: 0.54-1.02x of them on 2x H100
    (results/nvidia-h100-x2/figures-that-hold-2/blocks-pinned/default)."""
    by_key = {b["key"]: b for b in benchmarks}
    if selection.suites is not None and "nccl" in selection.suites:
        return single, frozenset()
    if not any(by_key[k].get("interface") == "nccl" for p in mpi_phases for k in p.keys if k in by_key):
        return single, frozenset()
    named = {k for k in single.keys if any(fnmatch.fnmatchcase(k, p) for p in selection.only)}
    left_out = frozenset(k for k in single.keys if by_key.get(k, {}).get("suite") == "nccl" and k not in named)
    return replace(single, keys=tuple(k for k in single.keys if k not in left_out)), left_out


def plan_torch(selected: list[dict[str, Any]], options: RunOptions, topology: dict[str, Any] | None) -> TorchPlan | None:
    """The torch suite's part of the run: its distributed points on one process per GPU under the
    launcher the engine's MPI phase would use (none: they become skip records saying why)."""
    keys = tuple(b["key"] for b in selected if b.get("runnable"))
    if not keys:
        return None
    launcher, why = None, ""
    if any(torch_catalog.BY_KEY[k].part == "dist" for k in keys):
        try:
            launcher = unbound(find_launcher(options.ranks or max(2, gpu_count(topology)), options.launcher))
        except UsageError as e:
            why = str(e)
    return TorchPlan(keys, launcher, why)


def suite_lines(request: Selection, benchmarks: list[dict[str, Any]], running: list[dict[str, Any]],
                engine_info: dict[str, Any], topology: dict[str, Any] | None, launcher: dict[str, Any],
                no_launcher: str, torch_plan: TorchPlan | None = None, quick_nccl: str = "") -> tuple[str, ...]:
    """'runs host: 14 benchmarks, one process' / 'leaves out gpu: no GPU on this machine'."""
    known = [*KNOWN_SUITES, *sorted({b["suite"] for b in benchmarks} - set(KNOWN_SUITES))]
    lines = []
    left_out: dict[str, list[str]] = {}  # reason -> suites: a reason shared is said once
    for suite in known:
        count = sum(1 for b in running if b["suite"] == suite)
        if not count and suite in OPTIONAL_SUITES and (request.suites is None or suite not in request.suites):
            continue  # an optional suite is named to run; `commatlas list` shows it, a run leaves it unsaid
        if count:
            where = "one process"
            if suite in MPI_SUITES:
                ranks = f"{launcher['ranks']} ranks" if launcher.get("ranks") else "the launcher's ranks"
                where = f"{ranks} under {shlex.join(launcher.get('command') or [])}"
                if launcher.get("phases"):  # one phase per library and rank count
                    where = "; ".join(f"{p['ranks']} ranks under {shlex.join(p['command'])}"
                                      + (f" ({p['library']})" if p.get("library") else "") for p in launcher["phases"])
            if suite == torch_catalog.SUITE and torch_plan is not None:
                where = torch_plan.describe()
            lines.append(f"runs {suite}: {count} benchmark{'s' if count > 1 else ''}, {where}")
            continue
        why = why_not_here(suite, benchmarks, engine_info, topology)
        if why is None and suite in MPI_SUITES and no_launcher:
            why = no_launcher
        if why is None and suite == "nccl" and quick_nccl:
            why = quick_nccl
        if why is None:
            in_suite = [b for b in benchmarks if b["suite"] == suite]
            if request.suites is not None or request.only:
                why = "not asked for"
            elif in_suite:
                why = "--exclude leaves none of it"
            else:
                why = "no benchmark of it in this build"
        left_out.setdefault(why, []).append(suite)
    lines += [f"leaves out {', '.join(suites)}: {why}" for why, suites in left_out.items()]
    return tuple(lines)


def startup_timeout(launcher: Launcher | None) -> float | None:
    if launcher is None or launcher.kind == "custom":
        return None
    # The tests' stuck launcher should not cost a minute.
    return float(os.environ.get("COMMATLAS_STARTUP_TIMEOUT_S", STARTUP_TIMEOUT_S))


def tuning_passes(options: RunOptions, benchmarks: list[dict[str, Any]], plan: Plan, console: Console) -> list[Pass]:
    """A preset's passes, after saying how long they should take; refused when that is hours."""
    chosen = preset(options.tune or "")
    passes = chosen.passes(options.repeat)
    selected = sum(len(phase.keys) for phase in plan.phases)
    sizes = len(options.sizes.split(",")) if options.sizes else (3 if options.quick else 8)
    budget = options.time_budget or (0.02 if options.quick else 0.2)
    seconds = estimate_seconds(len(passes), selected, sizes, budget)
    what = f"{len(passes)} passes ({', '.join(k.name for k in chosen.knobs)} one at a time) over {selected} benchmarks"
    if seconds > MAX_PRESET_S:
        raise UsageError(f"--tune {chosen.name} would run for about {format_duration(seconds)} ({what}): "
                         f"narrow it with --only, --sizes or --quick")
    console.print(f"commatlas: note: --tune {chosen.name}: {what}, about {format_duration(seconds)} (estimate)")
    return passes


def mpi_was_asked_for(options: RunOptions, others_selected: bool) -> bool:
    """Whether a missing launcher refuses the run rather than leaving the MPI phase out: MPI was
    asked for by suite or option, or --only selects nothing else (a glob such as '*' that also
    selects single-process benchmarks runs those, and says why MPI is left out)."""
    chosen = options.selection
    if chosen.suites or options.ranks or options.launcher or options.mpi:
        return True
    return bool(chosen.only) and not others_selected


def prepare_run_dir(out: Path | None) -> Path:
    run_dir = out or default_run_dir()
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--out {run_dir} is a file: name a folder (it is made if missing)")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / RESULTS_FILE).open("x").close()
    except FileExistsError:
        raise UsageError(f"{run_dir} already holds a {RESULTS_FILE} (an earlier run): choose another --out, "
                         f"or continue it with --resume {run_dir}") from None
    except OSError as e:
        raise UsageError(f"cannot write the output directory {run_dir}: {e.strerror or e}") from None
    return run_dir


def stop_process_group(process: subprocess.Popen[str]) -> None:
    """Stops the engine (or the launcher and its ranks), which run in their own process group."""
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@dataclass
class PhaseOutcome:
    status: int
    log_from: int               # where this phase's lines begin in engine.log
    started: bool = False       # the engine announced itself (its first progress event)
    startup_timed_out: bool = False
    startup_timeout_s: float | None = None


def run_phase(command: list[str], title: str, log_path: Path, progress: PhaseProgress,
              metrics: dict[str, str], environment: dict[str, str] | None = None, unset: tuple[str, ...] = (),
              startup_timeout_s: float | None = None, keep: list[str] | None = None, total: int | None = None,
              point_of: Callable[[str], dict[str, Any] | None] | None = None) -> PhaseOutcome:
    """Runs one phase to its end; `keep` collects every line it printed (the OSU reference's
    figures), which also go to the log; `total` and `point_of`: PhaseProgress.follow's, for a
    program that prints no progress events."""
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {shlex.join(command)}\n")
        log.flush()
        outcome = PhaseOutcome(0, log_path.stat().st_size, startup_timeout_s=startup_timeout_s)
        # A session of its own: Ctrl-C reaches only us, and we stop the whole group in order.
        try:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True,
                                       start_new_session=True, bufsize=1,
                                       env={k: v for k, v in {**os.environ, **(environment or {})}.items()
                                            if k not in unset} if environment or unset else None)
        except OSError as e:
            raise CommatlasError(f"cannot start {command[0]}: {e.strerror or e}") from None
        started = threading.Event()
        watch = None
        if startup_timeout_s is not None:
            # A launcher that neither starts the engine nor exits (mpiexec after a failed spawn)
            # would hold the progress bar at "0/?" for ever.
            def give_up() -> None:
                if not started.wait(startup_timeout_s) and process.poll() is None:
                    outcome.startup_timed_out = True
                    stop_process_group(process)
            watch = threading.Thread(target=give_up, daemon=True)
            watch.start()
        try:
            assert process.stdout is not None
            lines = process.stdout if keep is None else _kept(process.stdout, keep)
            progress.follow(title, lines, log, metrics, on_event=started.set, total=total, point_of=point_of)
            outcome.status = process.wait()
        except BaseException:
            stop_process_group(process)
            raise
        finally:
            outcome.started = started.is_set()
            started.set()
        return outcome


def _kept(stream: Iterable[str], keep: list[str]) -> Iterator[str]:
    for line in stream:
        keep.append(line)
        yield line


def run_osu_reference(phase: Phase, engine: Engine, run_pass: Pass, results: Path, log_path: Path,
                      progress: PhaseProgress, environment: dict[str, str]) -> None:
    """After an MPI phase: the OSU-method reference at the sizes the engine's mpi.pingpong,
    mpi.bandwidth and mpi.bibw measured in this pass, under the same launcher (commatlas.analysis.osu); then,
    where the engine's GPU-aware device points ran (MPI reported CUDA support), the same tests on
    device buffers for mpi.gpu_aware.*. Once per pass, so `--repeat N` interleaves N rounds of
    engine and reference. Its failure is recorded, never the run's: the engine's figures stand
    without it."""
    this_pass = [r for r in read_records(results) if r.get("repeat") == run_pass.repeat
                 and all((r.get("params") or {}).get(f"env.{k}") == v for k, v in run_pass.env)]
    if phase.launcher is not None and phase.launcher.ranks is not None:
        this_pass = [r for r in this_pass if r.get("ranks") == phase.launcher.ranks]
    if phase.library is not None:
        # This phase's library only: the same points of another library are in the file too.
        this_pass = [r for r in this_pass if (r.get("mpi_library") or {}).get("id") == phase.library.library
                     and (r.get("mpi_library") or {}).get("version") == phase.library.version]
    library = next((r["mpi_library"] for r in this_pass if r.get("mpi_library")), None)
    program = osu.reference_path(phase.engine_for(engine).path)
    if program is None or phase.launcher is None:
        return
    sweeps = [(buffers, *osu.tests_and_sizes(this_pass, buffers, phase.references)) for buffers in osu.BUFFERS]
    sweeps = [(buffers, tests, sizes) for buffers, tests, sizes in sweeps if tests]
    if sweeps:
        _run_osu_reference(phase.engine_for(engine), phase.launcher, program, sweeps, this_pass, run_pass, results,
                           log_path, progress, environment, library, phase.gpu_context)


def _run_osu_reference(engine: Engine, launcher: Launcher, program: Path, sweeps: list[tuple[str, list[str], list[int]]],
                       this_pass: list[dict[str, Any]], run_pass: Pass, results: Path, log_path: Path,
                       progress: PhaseProgress, environment: dict[str, str],
                       library: dict[str, Any] | None = None, gpu_context: bool = False) -> None:
    """Every sweep (host buffers, then device buffers) in one launch of the reference."""
    ranks = max(int(r.get("ranks") or 1) for r in this_pass)
    measurements: list[dict[str, Any]] = []
    if launcher.ranks != 2:
        why = ("the OSU-method reference runs on exactly 2 ranks, as osu_latency, osu_bw and osu_bibw do "
               f"(this phase: {launcher.ranks or 'a custom launcher'})")
        for buffers, tests, _ in sweeps:
            measurements += osu.reference_skips(why, ranks, run_pass.repeat, run_pass.env, tests, buffers, library)
    else:
        command = launcher.command([str(program), *osu.sweeps_arguments(sweeps, gpu_context)], environment)
        lines: list[str] = []
        # "OSU method", short: the longest phase title widens every progress line's first column.
        outcome = run_phase(command, "OSU method", log_path, progress, osu.PROGRESS_METRICS, environment,
                            run_pass.unset(), startup_timeout(launcher), keep=lines,
                            total=sum(osu.reference_total(tests, sizes) for _, tests, sizes in sweeps),
                            point_of=osu.progress_point)
        measurements = osu.reference_measurements(lines, ranks, run_pass.repeat, run_pass.env,
                                                  movements=osu.engine_movements(this_pass), mpi_library=library)
        if outcome.status != 0:
            refused = outcome.status == osu.REFUSED_DEVICE_BUFFERS
            for buffers, tests, _ in sweeps:
                if refused and buffers != "device":
                    continue  # the program left out only the device sweep, and said so with this status
                message = f"{osu.REFERENCE_PROGRAM} failed (exit status {outcome.status}); see {log_path.name}"
                if refused:
                    message = (f"{osu.REFERENCE_PROGRAM} --buffers device: the MPI library did not report CUDA support "
                               f"to it, or it was built without CUDA; see {log_path.name}")
                measurements += osu.reference_skips(message, ranks, run_pass.repeat, run_pass.env, tests, buffers, library)
    # Written by the engine's record code, like every record (commatlas-engine ingest).
    engine.ingest(measurements, results)


# Launcher lines that frame a message without saying anything ("-----", "*** ...").
def said_something(line: str) -> bool:
    return any(c.isalnum() for c in line) and not line.startswith("$ ")


def phase_failure(outcome: PhaseOutcome, log_path: Path, launcher: str | None, console: Console) -> CommatlasError:
    text = log_path.read_bytes()[outcome.log_from:].decode("utf-8", errors="replace")
    lines = text.splitlines()
    engine_lines = [line for line in lines if line.startswith("commatlas-engine")]
    if outcome.status == 2 and any(line.startswith("commatlas-engine: error: ") for line in engine_lines):
        return UsageError(engine_message("\n".join(engine_lines)))
    said = [line.rstrip() for line in lines if said_something(line)]
    if not outcome.started and launcher is not None:
        # Failed before the engine said anything: the launcher's own words are the diagnosis.
        for line in said[-LAUNCHER_LINES_SHOWN:]:
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        how = (f"did not start the engine within {outcome.startup_timeout_s:g} s and was stopped" if outcome.startup_timed_out
               else f"failed before the engine started ({exit_text(outcome.status)})")
        message = engine_message("\n".join(engine_lines or said)) if said else "it printed nothing"
        return CommatlasError(f"the launcher '{launcher}' {how}: {message} (log: {log_path})")
    # Without a line of the engine's own (a rank killed from outside), the launcher's last line
    # that says something names what failed.
    message = engine_message("\n".join(engine_lines or said))
    hang = hang_from_log(text)
    if hang is not None:
        # Every live rank's watchdog spoke; the ranks that did not are the ones that stopped.
        message = "watchdog: " + hang.describe(nodes_of_last_phase(log_path))
    if message == "no message":
        message = "it printed nothing"
    how = f"was killed by {signal_name(-outcome.status)}" if outcome.status < 0 else f"failed ({exit_text(outcome.status)})"
    return CommatlasError(f"the engine {how}: {message} (see {log_path})")


def nodes_of_last_phase(log_path: Path) -> list[str] | None:
    """Each rank's node, from the run's records (any multi-rank record names them)."""
    results = log_path.parent / RESULTS_FILE
    try:
        records = read_records(results)
    except OSError:
        return None
    for record in reversed(records):
        nodes = (record.get("placement") or {}).get("nodes")
        if nodes:
            return list(nodes)
    return None


def exit_text(status: int) -> str:
    return f"killed by {signal_name(-status)}" if status < 0 else f"exit status {status}"


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"



class Interrupted(Exception):
    """SIGTERM, treated as Ctrl-C: stop the engine, keep what was measured."""


def raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted()


def pass_arguments(run_pass: Pass) -> list[str]:
    """Engine flags that stamp a pass into its records; the engine reads the variables itself."""
    args = ["--repeat-index", str(run_pass.repeat)] if run_pass.repeat is not None else []
    if run_pass.env:
        args += ["--record-env", ",".join(name for name, _ in run_pass.env)]
    return args


def write_end_record(results: Path, status: str, started: float) -> list[dict[str, Any]]:
    try:
        drop_partial_tail(results)
        records = read_records(results)
        append_record(results, end_record(status, records, time.monotonic() - started))
    except OSError as e:
        raise CommatlasError(f"cannot write {results}: {e.strerror or e}") from None
    return records


def measure_selection(options: RunOptions, engine: Engine, progress_console: Console, resume: Path | None,
                      report: bool) -> tuple[Path, Path, list[dict[str, Any]], str, CommatlasError | None]:
    """execute()'s engine work: the queries, the plan, every pass and phase, the end record.
    Returns the run directory, its results file, the records, the run's status and its failure."""
    start = utc_now()
    started = STARTED  # the command's start, imports included, as `time` counts it
    writer_loaded = start_loading_writer() if report else (lambda: None)
    # `list` with the run options makes the engine validate sizes, NUMA nodes and memory
    # before anything is created, and answers which benchmarks exist.
    try:
        engine_info, topology, engine_benchmarks = engine.info_topology_benchmarks(options.engine_arguments())
    finally:
        writer_loaded()  # before anything is measured, whatever the queries said
    benchmarks = osu.with_references(engine_benchmarks, engine.path)
    benchmarks += torch_catalog.listed(gpu_count(topology))
    plan = plan_run(options, engine_info, topology, benchmarks, engine)
    passes = plan_passes(options.repeat, options.sweep_env)
    if options.tune is not None:
        passes = tuning_passes(options, benchmarks, plan, progress_console)
    if resume is None:
        run_dir, skip_arguments = prepare_run_dir(options.out), []
        append_record(run_dir / RESULTS_FILE,
                      meta_record(run_dir.name, start, options.for_meta(), engine_info, topology, plan.launcher))
    else:
        run_dir = resume
        skip_arguments = ["--skip-points", str(resume_run(run_dir, options.for_meta(), engine_info, topology).resolve())]
    results, log_path = run_dir / RESULTS_FILE, run_dir / ENGINE_LOG
    for line in plan.suites:
        print_folded(progress_console, line)
    for note in plan.notes:
        print_folded(progress_console, f"commatlas: note: {note}")

    metrics = {b["key"]: b["metric"] for b in benchmarks}
    status, failure = "complete", None
    previous = signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        with PhaseProgress(progress_console) as progress:
            for run_pass in passes:
                environment = run_pass.environment()
                arguments = [*options.engine_arguments(), *pass_arguments(run_pass), *skip_arguments]
                for phase in plan.phases:
                    title = f"{phase.title} [{run_pass.describe()}]" if run_pass.describe() else phase.title
                    outcome = run_phase(phase.command(engine, results.resolve(), arguments, environment),
                                        title, log_path, progress, metrics, environment, run_pass.unset(),
                                        startup_timeout(phase.launcher))
                    if outcome.status == 0 and phase.launcher is not None:
                        run_osu_reference(phase, engine, run_pass, results, log_path, progress, environment)
                    if outcome.status != 0:
                        launcher = phase.launcher.prefix[0] if phase.launcher else None
                        broke = phase_failure(outcome, log_path, launcher, progress_console)
                        if options.tune is not None and not isinstance(broke, UsageError):
                            # A setting that kills the job is an answer of the tuning run, not its failure.
                            progress_console.print(f"commatlas: note: [{run_pass.describe()}] {phase.title}: {broke}")
                            continue
                        status, failure = "failed", broke
                        if isinstance(failure, UsageError) or not outcome.started:
                            break
                if failure is not None and (isinstance(failure, UsageError) or not outcome.started):
                    break
                if plan.torch is not None:
                    run_torch_suite(plan.torch, engine, results, log_path, run_phase, progress, environment,
                                    run_pass.unset(), run_pass.repeat, tuple(name for name, _ in run_pass.env),
                                    options.quick, options.time_budget)
    except (KeyboardInterrupt, Interrupted):
        status = "interrupted"
    finally:
        signal.signal(signal.SIGTERM, previous)
        records = write_end_record(results, status, started)
    return run_dir, results, records, status, failure


def execute(options: RunOptions, engine: Engine, console: Console, progress_console: Console,
            resume: Path | None = None, report: bool = True) -> int:
    """Runs the selection; with `resume`, continues that run directory instead of a new one;
    `report=False` leaves the HTML report out (runs made only to be compared)."""
    with engine.driver_held():  # for the engine processes only: the summary and report need no GPU
        run_dir, results, records, status, failure = measure_selection(options, engine, progress_console, resume, report)

    if any(r.get("type") in ("result", "skip", "error") for r in records):
        print_summary(console, records)
        if report:
            try:
                write_report_if_available(run_dir, console)
            except UsageError as e:
                failure = failure or e  # said last, after where the records are
    if status == "interrupted":
        # The command on a line of its own, never folded: it is copied and pasted.
        print_folded(console, f"interrupted: the records measured so far are in {run_dir}; continue with:")
        print_whole(console, f"commatlas run --resume {shlex.quote(str(run_dir))}")
        return EXIT_INTERRUPTED
    print_whole(console, f"results: {results}")
    if failure is not None:
        raise failure
    return 0
