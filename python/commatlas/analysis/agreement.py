"""What a self-check's verdict means, in words a user can act on.

A self-check sets a figure of the tool (the engine, the harness) beside a reference that measures
the same thing another way (the OSU method, a bare loop). On a quiet machine they agree or they
do not; on a noisy one a miss may say nothing about the tool, only that the machine did not repeat
itself. The four verdicts keep those apart:

- agrees: within the check's rule (3%, or the check's own allowance);
- the machine did not repeat: outside the rule, but the figures' own pass-to-pass spread is wider
  than the difference, so the difference cannot be told from the machine's noise;
- one pass: outside the rule, and with one pass the spread is unknown (`--repeat 3` measures it);
- slower / faster beyond its spread: outside the rule and outside the spread, in every sense a
  difference of the tool.

First of all, a reference that cannot judge: a loop whose calls are enqueued inside its own clock
(the bare nccl-tests loop) times the host's launches wherever enqueueing a call takes as long as
the call. Its record says what the enqueueing took (`timing.host_enqueue_s`); where the tool is the
faster of the two there, the verdict says the reference was launch-bound, not that the tool differs.

Before the spread is asked, a fifth: the host got in the way. Outside the rule, where the records
themselves say the hypervisor or other processes took the machine during a pass of either figure,
or that the host had moved the job's CPUs between the two figures' passes (`timing.host_activity`,
commatlas.analysis.host_activity), the miss is the machine's, whatever the spread: the verdict
names what the host did.

Two figures measured in two jobs meet one more cause: each job draws its own state of the machine.
Where the records carry a witness of that state (the ranks' GPU copy level, `timing.copy_level_us`,
commatlas.analysis.process_state) and the two jobs' witnesses lie apart the way the figures do, the
miss is the jobs' states, not the tool: the verdict names both readings.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

REPEAT_HINT = "--repeat 3 measures it"


class Kind(Enum):
    AGREES = "agrees"
    DID_NOT_REPEAT = "did not repeat"
    ONE_PASS = "one pass"
    HOST = "host in the way"
    LAUNCH_BOUND = "reference launch-bound"
    JOB_STATE = "job state"
    DIFFERS = "differs"


# What each short verdict means, said once below a table of short verdicts.
MEANING = {
    Kind.DID_NOT_REPEAT: "did not repeat: the figures' own pass-to-pass spread is wider than the difference",
    Kind.ONE_PASS: f"one pass: the spread is unknown, {REPEAT_HINT}",
    Kind.HOST: ("host in the way: the records show the hypervisor or other processes taking the machine during a "
                "pass, or moving the job's CPUs between passes"),
    Kind.JOB_STATE: ("job state: the two figures ran in two jobs, and their ranks copied to and from their GPUs at "
                     "different levels (timing.copy_level_us), which small device messages pay, the way the "
                     "figures differ"),
    Kind.DIFFERS: "beyond spread: a difference of the tool, wider than the machine's own spread",
    Kind.LAUNCH_BOUND: ("reference launch-bound: its host took as long to enqueue each call as the call took, so "
                        "it timed the launches, not the operation"),
}


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    text: str
    short: str  # for a narrow table column; MEANING says the rest

    @property
    def differs(self) -> bool:
        """A difference of the tool: outside the rule and outside the machine's own spread."""
        return self.kind is Kind.DIFFERS


def judge(*, within_rule: bool, difference: float, spread: float | None, slower: bool,
          subject: str, reference: str, rule: str = "", host: str = "", launch_bound: str = "",
          job_state: str = "") -> Verdict:
    """`difference`: the tool's figure over the reference's, minus one. `spread`: (max - min) /
    median over the passes of the figures compared (the wider of the two), None with one pass.
    `slower`: the tool took longer (fewer GB/s, more us). `rule`: said after "agrees" when the rule
    that decided is not the plain 3%. `host`: what the host did to a pass of either figure, where
    the records show it taking the machine (commatlas.analysis.host_activity.interference).
    `launch_bound`: how the reference's own host enqueueing paced it, where it did and the tool is
    the faster: the reference then cannot judge the tool. `job_state`: where the two figures ran in
    two jobs, how the jobs' witnessed states differ the way the figures do
    (commatlas.analysis.process_state.level_explains)."""
    if within_rule:
        agrees = "agrees" + (f" ({rule})" if rule else "")
        return Verdict(Kind.AGREES, agrees, agrees)
    if launch_bound and not slower:
        return Verdict(Kind.LAUNCH_BOUND, f"{reference} was launch-bound: {launch_bound}", "reference launch-bound")
    if host:
        return Verdict(Kind.HOST, f"the host got in the way: {host}", "host in the way")
    if job_state:
        return Verdict(Kind.JOB_STATE, f"the two jobs drew different states: {job_state}", "job state")
    if spread is None:
        return Verdict(Kind.ONE_PASS, f"one pass: spread unknown, {REPEAT_HINT}", "one pass")
    if abs(difference) <= spread:
        return Verdict(Kind.DID_NOT_REPEAT, f"the machine did not repeat (its own spread is {_percent(spread)}, "
                                            f"wider than the difference)", "did not repeat")
    way = "slower" if slower else "faster"
    apart = f"{1 + difference:.3g}×" if difference >= 1 else _percent(abs(difference))
    return Verdict(Kind.DIFFERS, f"{subject} is {way} than {reference} beyond its spread "
                                 f"({apart} apart, spread {_percent(spread)})",
                   f"{way} beyond spread")


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%" if fraction < 0.1 else f"{fraction * 100:.0f}%"
