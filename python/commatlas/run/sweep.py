"""Passes of one `commatlas run`: `--repeat K` measures the whole selection K times, and
`--sweep-env NAME=v1,v2` once per combination of environment values (NCCL_ALGO, NCCL_PROTO,
UCX_TLS, ...: tuning variables change results up to 10x). Every pass writes into the same
results file; the engine stamps each record with its pass (`repeat`, params `env.NAME`)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from commatlas.errors import UsageError
from commatlas.io.records import UNSET  # the value that leaves a variable out of the environment

# What a POSIX shell accepts as a variable name; anything else cannot reach the engine intact.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_PASSES = 1000  # a typo like 1..1000 values must not start a week-long run


@dataclass(frozen=True)
class EnvSweep:
    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Pass:
    repeat: int | None     # 1..K with --repeat K > 1, else None (records carry no repeat)
    env: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        parts = [f"repeat {self.repeat}"] if self.repeat is not None else []
        set_values = [f"{name}={value}" for name, value in self.env if value != UNSET]
        parts += set_values or (["defaults"] if self.env else [])
        return ", ".join(parts)

    def environment(self) -> dict[str, str]:
        """The variables this pass sets."""
        return {name: value for name, value in self.env if value != UNSET}

    def unset(self) -> tuple[str, ...]:
        """The variables this pass removes from the environment."""
        return tuple(name for name, value in self.env if value == UNSET)


def parse_sweep_env(spec: str) -> EnvSweep:
    """'NCCL_ALGO=Ring,Tree' -> EnvSweep('NCCL_ALGO', ('Ring', 'Tree')); UsageError otherwise."""
    name, equals, values_text = spec.partition("=")
    name = name.strip()
    if not equals:
        raise UsageError(f"--sweep-env {spec!r} needs the form NAME=VALUE1,VALUE2")
    if not _NAME.match(name):
        raise UsageError(f"--sweep-env {spec!r}: {name!r} is not an environment variable name")
    values = tuple(v.strip() for v in values_text.split(","))
    if not values_text.strip() or any(not v for v in values):
        raise UsageError(f"--sweep-env {spec!r}: empty value (give NAME=VALUE1,VALUE2)")
    if any("\0" in v or "\n" in v for v in values):
        raise UsageError(f"--sweep-env {spec!r}: a value holds a NUL or newline")
    if len(set(values)) != len(values):
        raise UsageError(f"--sweep-env {spec!r}: a value is given twice")
    return EnvSweep(name, values)


def parse_sweeps(specs: list[str]) -> tuple[EnvSweep, ...]:
    sweeps = tuple(parse_sweep_env(spec) for spec in specs)
    names = [s.name for s in sweeps]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--sweep-env names {twice[0]} twice: give its values in one NAME=V1,V2")
    return sweeps


def plan_passes(repeat: int, sweeps: tuple[EnvSweep, ...]) -> list[Pass]:
    if repeat < 1:
        raise UsageError(f"--repeat needs a positive number, got {repeat}")
    combinations = list(itertools.product(*(s.values for s in sweeps)))
    if repeat * len(combinations) > MAX_PASSES:
        raise UsageError(f"--repeat and --sweep-env ask for {repeat * len(combinations)} passes "
                         f"(at most {MAX_PASSES})")
    names = [s.name for s in sweeps]
    return [Pass(k if repeat > 1 else None, tuple(zip(names, values)))
            for k in range(1, repeat + 1) for values in combinations]
