"""The --sweep-env parser and the passes it plans; how each launcher carries the variables."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commatlas.errors import UsageError
from commatlas.run.launcher import Launcher
from commatlas.run.sweep import EnvSweep, Pass, parse_sweep_env, parse_sweeps, plan_passes

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
VALUES = st.lists(st.text(alphabet=string.ascii_letters + string.digits + "_-.:/ ", min_size=1, max_size=12)
                  .map(str.strip).filter(bool), min_size=1, max_size=5, unique=True)


def test_parse_examples() -> None:
    assert parse_sweep_env("NCCL_ALGO=Ring,Tree") == EnvSweep("NCCL_ALGO", ("Ring", "Tree"))
    assert parse_sweep_env("NCCL_PROTO = LL , Simple") == EnvSweep("NCCL_PROTO", ("LL", "Simple"))
    assert parse_sweep_env("UCX_TLS=rc,sm=x") == EnvSweep("UCX_TLS", ("rc", "sm=x"))  # '=' inside a value


@pytest.mark.parametrize("spec", ["", "=", "NCCL_ALGO", "NCCL_ALGO=", "NCCL_ALGO=Ring,", "NCCL_ALGO=,Ring",
                                  "1ALGO=a", "NCCL-ALGO=a", "A B=c", "X=a,a", "X=a\nb"])
def test_malformed_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError):
        parse_sweep_env(spec)


def test_passes_are_every_combination_per_repetition() -> None:
    sweeps = parse_sweeps(["A=1,2", "B=x,y,z"])
    passes = plan_passes(2, sweeps)
    assert len(passes) == 12
    assert passes[0] == Pass(1, (("A", "1"), ("B", "x")))
    assert passes[-1] == Pass(2, (("A", "2"), ("B", "z")))
    assert plan_passes(1, ()) == [Pass(None, ())]  # the plain run: no stamps at all
    with pytest.raises(UsageError):
        parse_sweeps(["A=1", "A=2"])
    with pytest.raises(UsageError):
        plan_passes(0, ())
    with pytest.raises(UsageError):
        plan_passes(1001, ())


def test_launchers_carry_the_variables() -> None:
    program = ["engine", "run"]
    env = {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL"}
    openmpi = Launcher("openmpi", ("mpiexec", "-n", "2"), 2)
    assert openmpi.command(program, env) == ["mpiexec", "-n", "2", "-x", "NCCL_ALGO", "-x", "NCCL_PROTO", *program]
    mpich = Launcher("mpich", ("mpiexec", "-n", "2"), 2)
    assert mpich.command(program, env) == ["mpiexec", "-n", "2", "-genv", "NCCL_ALGO", "Ring",
                                           "-genv", "NCCL_PROTO", "LL", *program]
    # srun and unknown launchers pass the environment they were started with.
    assert Launcher("custom", ("srun",), None).command(program, env) == ["srun", *program]
    assert openmpi.command(program) == ["mpiexec", "-n", "2", *program]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_text_parses_or_is_one_line_usage_error(spec: str) -> None:
    try:
        sweep = parse_sweep_env(spec)
    except UsageError as e:
        assert "\n" not in str(e) and "\r" not in str(e)
        return
    assert sweep.values and all(sweep.values) and "=" not in sweep.name


@settings(max_examples=200, deadline=None)
@given(NAMES, VALUES)
def test_well_formed_specs_round_trip(name: str, values: list[str]) -> None:
    assert parse_sweep_env(f"{name}={','.join(values)}") == EnvSweep(name, tuple(values))
