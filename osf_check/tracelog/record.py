"""Logs of the reference implementations, as a deployment would record them.

The recorder is instrumentation around the implementation (like tracing middleware at
its tool, HTTP and socket boundaries): after each model action the harness performs, it
writes what the stations did, in the deployment's own vocabulary
(``tool.run_graph_session``, ``desktop.graph_finished``, ``relay.response_received``)
with the ids and values they saw (``graph_log`` and ``wire_log`` say which).  What
happens only on the network (a lost response, POST or acknowledgement) is not logged:
no station sees it.

One JSON object per line: ``{"time": s, "station": ..., "event": ..., "fields": {...}}``.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from typing import Any

from osf_check.fuzz.harness import Divergence
from osf_check.models.dsl import Model
from osf_check.output import halves_escaped

from . import graph_log, wire_log

#: per model: what to note before a step, and the lines its stations log after it
STATIONS: dict[str, Any] = {"graph-relay": graph_log, "wire-relay": wire_log}


@dataclass
class Walk:
    """A random run of the implementation and its log."""

    path: list[int]  # the model instances performed
    log: str
    #: the first step where the fuzzer's checks find the implementation off the model
    diverged: int | None
    #: per step, the log lines (1-based, first and last) it wrote, or None
    lines: list[tuple[int, int] | None]

    def step_of_line(self, n: int) -> int:
        return next(k for k, r in enumerate(self.lines) if r is not None and r[0] <= n <= r[1])


def walk(model: Model, mutant: str | None, *, seed: int = 0, steps: int = 40,
         step_seconds: float = 0.5, judge: bool = True, prefix: list[str] = ()) -> Walk:
    """Run the implementation at random as a deployment would: the environment (agent,
    owner, network) acts as the model allows it, the desktop takes the decisions it offers
    itself, and the log is recorded as it goes.  The fuzzer's checks run alongside, to say
    where the implementation first left the model (the log checker is not told; without
    ``judge`` they do not run, and ``diverged`` stays None).  ``prefix`` names actions
    (labels) to take first, each while it is one the run could take (a counterexample of
    the model's mutant, say), before the random part."""
    from osf_check.fuzz.driver import Checker, make_harness, tour_result
    stations = STATIONS[model.name]
    rng = random.Random(seed)
    chk = Checker(model)
    h = make_harness(model, mutant, None, seed, tour_result)
    h.probes = False  # the fuzzer's data probes are no part of what a deployment logs
    labels = {i.label: i.index for i in model.instances}
    s = model.initial_states[0]
    out = io.StringIO()
    w = Walk([], "", None, [])
    n = 0
    try:
        for k in range(steps):
            env = [a for a in chk.enabled(s) if model.instances[a].name not in h.DECIDES]
            own = [labels[x] for x in sorted(h.offers()) if x in labels]
            if not env and not own:
                break
            # a desktop acts on its own decisions at once, half the time before anything
            # else happens (a real one starts the next Graph as soon as it can)
            ai = rng.choice(own if own and rng.random() < 0.5 else env + own)
            if k < len(prefix) and labels.get(prefix[k]) in env + own:
                ai = labels[prefix[k]]
            inst = model.instances[ai]
            nxt = chk.steps[ai](s)
            was = stations.before(h)
            try:
                outs = h.apply(inst)
                if judge and w.diverged is None:
                    try:
                        _judge(chk, h, ai, s, outs)
                    except Divergence:
                        w.diverged = k
            except Exception:  # noqa: BLE001 - a step it cannot take ends the run
                if judge and w.diverged is None:
                    w.diverged = k
                break
            w.path.append(ai)
            first = n + 1
            for station, event, fields in stations.events_of(h, inst, outs, was):
                n += 1
                # a lone half of a pair as JSON.stringify writes it: escaped
                out.write(halves_escaped(json.dumps(
                    {"time": round((k + 1) * step_seconds, 3), "station": station,
                     "event": event, "fields": fields}, ensure_ascii=False)) + "\n")
            w.lines.append((first, n) if n >= first else None)
            s = nxt if nxt is not None else s
    finally:
        h.close()
    w.log = out.getvalue()
    return w


def _judge(chk: Any, h: Any, ai: int, before: tuple, outs: dict[str, Any]) -> None:
    """The fuzzer's checks of one step already performed (``Checker.check`` without the
    apply)."""
    h_apply = h.apply
    h.apply = lambda inst: outs  # type: ignore[method-assign]
    try:
        chk.check(h, ai, before)
    finally:
        h.apply = h_apply  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    """``python -m osf_check.tracelog.record``: a log of a random run of the reference
    implementation on stdout (what ``osf-check check-log`` reads).

    Its exits are the command line's: bad input one line and 150, no room for the log
    152, a reader of stdout gone 141."""
    import argparse
    import sys
    from osf_check.api import MAX_SEED
    from osf_check.exits import BAD_INPUT, os_error
    from osf_check.fuzz.driver import IMPL_MUTANTS, model_for

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # argparse's usage and exit 2: one line, 150
            print(f"{self.prog}: error: {message}", file=sys.stderr)
            raise SystemExit(BAD_INPUT)

    def seed(text: str) -> int:
        if not text.isdigit() or int(text) > MAX_SEED:
            raise argparse.ArgumentTypeError(f"{text!r} is not a seed from 0 to {MAX_SEED}")
        return int(text)

    ap = Parser(prog="python -m osf_check.tracelog.record",
                description="A log of a random run of the reference implementation on "
                "stdout, as its stations would record it (what osf-check check-log reads).")
    ap.add_argument("--steps", type=int, default=1000, help="model steps to run (default 1000)")
    ap.add_argument("--seed", type=seed, default=0, help="the run's seed (default 0)")
    ap.add_argument("--model", default="graph-relay", choices=sorted(STATIONS),
                    help="the system (default graph-relay)")
    ap.add_argument("--mutant", default=None, metavar="NAME",
                    help="switch on one of the implementation's mutants")
    a = ap.parse_args(argv)
    if a.steps < 1:
        ap.error("--steps must be at least 1")
    if a.mutant is not None and a.mutant not in IMPL_MUTANTS[a.model]:
        ap.error(f"{a.model} has no mutant {a.mutant!r} (known: "
                 f"{', '.join(IMPL_MUTANTS[a.model])})")
    w = walk(model_for(a.model, a.mutant), a.mutant, seed=a.seed, steps=a.steps,
             judge=False)
    try:
        sys.stdout.write(w.log)
        sys.stdout.flush()
    except OSError as e:  # a full disk, or | head
        os_error(e)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
