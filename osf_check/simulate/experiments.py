"""Timed experiments on the Graph-run relay: the numbers asked before shipping.

Each experiment drives the reference implementation (``relay.graph``: the same
server and desktop relay loop the fuzzer checks) on a simulated clock: a small
event loop moves time from one event to the next (a relay tick, a control poll,
the end of a Graph, a client poll), with seeded numpy randomness.  Timing facts
(graph-relay.md): ticks every 20 s at a random phase, control polls every 3 s,
Graph run times log-normal with median 60 s and never under 5 s.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from osf_check.relay import constants
from osf_check.relay.graph.desktop import DesktopRelay
from osf_check.relay.graph.payload import RESULT_LIMIT, completion_payload
from osf_check.relay.graph.server import GraphServer
from osf_check.fuzz.mutants import NoOutbox
from osf_check.models.errors import BadValue

SID = "gs_" + "5e" * 16


#: runs per row in 000's tables ("2,000 run per riga"), the default of --runs
DOCUMENT_N = 2_000
#: how the command line names each fact 000's figures may depend on
_FACT_NAMES = {"poll": "--poll", "control": "--control-poll", "median_run": "--median-run",
               "sigma": "the run times' spread", "floor": "--min-run", "loss": "--loss",
               "stop": "the stop's delay", "post": "the POST's delay", "n": "--runs"}
#: what every timed table depends on
TIMING = ("poll", "control", "median_run", "sigma", "floor")
#: the set-up figures 000 does not give, chosen here (000's tables are met with them)
PROJECT_CHOICES = ("sigma", "stop", "post")


@dataclass
class Facts:
    poll: float = float(constants.RELAY_ROUND)
    control: float = float(constants.CONTROL_POLL)
    median_run: float = float(constants.RUN_MEDIAN)
    sigma: float = 0.8  # log-normal shape (the spec gives the median and the floor)
    #: fleet_cancel_run until the Graph has stopped, and a completion's POST until the
    #: server holds it: 000 gives neither; with a quarter second each its cancellation
    #: figures (mean 2.0 s, max 3.5 s: the 3 s poll plus half a second) are met
    stop: float = 0.25
    post: float = 0.25
    floor: float = float(constants.RUN_FLOOR)
    loss: float = 0.30

    def __post_init__(self) -> None:
        # run times are max(floor, a log-normal of this median): a floor above the
        # median makes it the median too, and every table would name the wrong one
        if self.floor > self.median_run:
            raise BadValue(f"the shortest run time ({self.floor:g} s) is above the median "
                           f"({self.median_run:g} s): the median of run times is at least "
                           "their shortest (raise --median-run or lower --min-run)")

    def setup(self) -> list[dict[str, Any]]:
        """Each figure of the set-up, with where it comes from: 000, this run's option, or
        the project's own choice where 000 gives none."""
        doc = Facts()
        rows = [("poll", "relay round", "s"), ("control", "control poll", "s"),
                ("median_run", "run time median", "s"), ("floor", "shortest run", "s"),
                ("sigma", "run time spread (log-normal sigma)", ""),
                ("stop", "stop after fleet_cancel_run", "s"),
                ("post", "a completion's POST", "s"), ("loss", "answers lost", "")]
        return [{"fact": name, "value": getattr(self, k), "unit": unit,
                 "source": "the project's choice" if k in PROJECT_CHOICES
                 and getattr(self, k) == getattr(doc, k) else
                 "000" if getattr(self, k) == getattr(doc, k) else "this run's option"}
                for k, name, unit in rows]

    def setup_text(self) -> str:
        """:meth:`setup` as one line, the project's choices marked."""
        parts = [f"{r['fact']} {r['value']:g}{(' ' + r['unit']) if r['unit'] else ''}"
                 + ("*" if r["source"] == "the project's choice" else
                    " (option)" if r["source"] == "this run's option" else "")
                 for r in self.setup()]
        import textwrap
        return textwrap.fill("set-up: " + ", ".join(parts), 88, subsequent_indent="  ") + (
            "\n  * the project's choice (000 gives no figure); every other figure is 000's")

    def run_times(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.maximum(self.floor, rng.lognormal(math.log(self.median_run), self.sigma, n))


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    seed: int
    n: int
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: 000's own figures: (the leading cells of our row, 000's values per column, None
    #: where 000 gives none); printed under our row with the difference
    ref: list[tuple[tuple, list]] = field(default_factory=list)
    #: the raw samples behind the rows, for plots (not written to the JSON)
    samples: Any = field(default=None, repr=False)
    #: what 000's figures depend on: facts (Facts' fields) and "n" for counts of runs
    ref_uses: tuple[str, ...] = ()
    #: per row, the half-width of each figure's 95 % interval (None: no interval, as for
    #: a maximum or an analytic value); empty when the table has none
    spread: list[list[float | None]] = field(default_factory=list)

    def compare_at(self, f: "Facts", n: int) -> None:
        """Keep 000's figures only where this run sets what they depend on as 000 did
        (with 99 % of answers lost, 000's calls at 30 % are no reference)."""
        doc, ours = {**vars(Facts()), "n": DOCUMENT_N}, {**vars(f), "n": n}
        moved = [k for k in self.ref_uses if ours[k] != doc[k]]
        if self.ref and moved:
            self.ref = []
            self.note += ("; " if self.note else "") + "000's figures are for " + ", ".join(
                f"{_FACT_NAMES[k]} {doc[k]:g}" if isinstance(doc[k], float) else
                f"{_FACT_NAMES[k]} {_fmt(doc[k])}" for k in moved) + ", not compared here"

    def beyond_noise(self, r: int, vals: list) -> list[bool]:
        """Which of row ``r``'s figures differ from 000's ``vals`` by more than the two
        samples' noise: our 95 % interval, widened for 000's own sample of
        :data:`DOCUMENT_N` runs (half-widths shrink as one over the square root of the
        runs, so both together are ours times sqrt(1 + n / 2,000))."""
        hw = self.spread[r] if self.spread else [None] * len(vals)
        widen = math.sqrt(1 + self.n / DOCUMENT_N)
        return [h is not None and _number(x) and _number(v) and abs(x - v) > h * widen
                for x, v, h in zip(self.rows[r], vals, hw)]

    def _lines(self) -> list[list[Any]]:
        out: list[list[Any]] = []
        for i, r in enumerate(self.rows):
            out.append(r)
            for lead, vals in self.ref:
                if not _names(r, lead):
                    continue
                out.append(["  000"] + [("" if v is None else v) for v in vals[1:]])
                far = self.beyond_noise(i, vals)
                out.append(["  difference"] + [
                    (_fmt(round(x - v, 2)) + ("*" if f else "") if _number(x) and _number(v)
                     else "") for x, v, f in list(zip(r, vals, far))[1:]])
        return out

    def text(self) -> str:
        lines = self._lines()
        cells = [[_fmt(x) for x in r] for r in lines]
        marked = any(c.endswith("*") for r in cells for c in r)
        if marked:  # a mark's column to the right of every figure, so that digits align
            cells = [[c if not i or c.endswith("*") or not c else c + " "
                      for i, c in enumerate(r)] for r in cells]
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(self.columns)]
        out = [f"{self.title}  (seed {self.seed}, N={self.n})"]
        out.append("  " + "  ".join(c.rjust(w) if i else c.ljust(w)
                                    for i, (c, w) in enumerate(zip(self.columns, widths))))
        for r in cells:
            out.append(("  " + "  ".join(x.rjust(w) if i else x.ljust(w)
                                         for i, (x, w) in enumerate(zip(r, widths)))).rstrip())
        if self.note:
            out.append(f"  {self.note}")
        if marked:
            out.append(f"  * beyond both samples' noise (95 %): ours of {self.n:,} runs and "
                       f"000's of {DOCUMENT_N:,}")
        return "\n".join(out) + "\n"

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "seed": self.seed, "n": self.n, "columns": self.columns,
                "rows": self.rows, "note": self.note,
                "half_width_95": self.spread,
                "reference_000": [{"row": list(lead), "values": vals,
                                   "beyond_noise": self._far_columns(lead, vals)}
                                  for lead, vals in self.ref],
                **self.extra}

    def _far_columns(self, lead: tuple, vals: list) -> list[str]:
        """The columns where the row that ``lead`` names is beyond noise from ``vals``."""
        at = next((i for i, r in enumerate(self.rows) if _names(r, lead)), None)
        return [] if at is None else [c for c, far in zip(self.columns,
                                                          self.beyond_noise(at, vals)) if far]


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:,.2f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _names(row: list[Any], lead: tuple) -> bool:
    """Whether 000's figures led by ``lead`` (the row's first cells) are of ``row``."""
    return tuple(row[:len(lead)]) == lead


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


#: the standard normal's 97.5 % quantile
Z95 = 1.959963984540054


def mean_hw(xs: np.ndarray) -> float | None:
    """Half-width of the 95 % interval of the mean of ``xs`` (normal approximation).

    >>> round(mean_hw(np.arange(100.0)), 2)
    5.69
    """
    xs = np.asarray(xs, dtype=float)
    return float(Z95 * xs.std(ddof=1) / math.sqrt(len(xs))) if len(xs) > 1 else None


def quantile_hw(xs: np.ndarray, q: float) -> float | None:
    """Half the width of the distribution-free 95 % interval of the ``q`` quantile of
    ``xs``: between the order statistics n q -/+ 1.96 sqrt(n q (1 - q)).

    >>> quantile_hw(np.arange(1000.0), 0.5)
    31.0
    """
    n = len(xs)
    if n < 2:
        return None
    s, d = np.sort(np.asarray(xs, dtype=float)), Z95 * math.sqrt(n * q * (1 - q))
    lo, hi = max(0, math.floor(n * q - d)), min(n - 1, math.ceil(n * q + d))
    return float(s[hi] - s[lo]) / 2


def share_hw(p: float, n: int) -> float:
    """Half-width of the 95 % interval of a share ``p`` of ``n`` (normal approximation)."""
    return Z95 * math.sqrt(p * (1 - p) / n)


def _spread(xs: np.ndarray) -> list[float | None]:
    """The half-widths of :func:`_stats`' figures (none for the maximum)."""
    return [mean_hw(xs), quantile_hw(xs, 0.5), quantile_hw(xs, 0.95), None]


def _stats(xs: np.ndarray) -> list[float]:
    xs = np.asarray(xs, dtype=float)
    return [float(xs.mean()), float(np.median(xs)), float(np.percentile(xs, 95)), float(xs.max())]


class Relay:
    """One server and one desktop on a simulated clock; ticks at ``phase + k * poll``."""

    def __init__(self, facts: Facts, phase: float, run_times: list[float], seed: int = 0,
                 outbox: bool = True):
        self.f = facts
        self.server = GraphServer(seed=seed)
        # without the outbox: the completion lives only in its POST (the outbox-off bug)
        self.outbox_on = outbox
        self.desktop = (DesktopRelay if outbox else NoOutbox)(":memory:", session_id=SID)
        self.server.sessions = {SID: {"slug": self.desktop.slug,
                                      "project_id": self.desktop.project_id}}
        self.phase = phase
        self.run_times = list(run_times)
        self.started: dict[str, float] = {}
        self.ended: dict[str, float] = {}  # when the server's run became terminal
        self.lose_next_post = False
        self.cancelled_queued = False  # the run was still queued when it was cancelled
        self.offline_until = 0.0
        self.k = 0  # the next tick's number

    def submit(self, key: str) -> str:
        return self.server.run_graph_session(0, {"graph_session_id": SID,
                                                 "idempotency_key": key})["command_id"]

    def _post(self, payload: dict[str, Any], t: float) -> None:
        if self.lose_next_post:
            self.lose_next_post = False
            return  # lost on the way: the outbox (if any) keeps it for the next round
        self.server.complete(payload)
        self.desktop.acked(payload["execution_id"])
        run = next(r for r in self.server.runs if r.command_id == payload["execution_id"])
        if run.status in ("completed", "failed", "cancelled"):
            self.ended.setdefault(run.command_id, t + self.f.post)

    def idle(self) -> bool:
        """Nothing left to happen: every run terminal (or stuck for good) and no completion
        waiting in the outbox."""
        pending = any(r.status in ("queued", "running") for r in self.server.runs)
        stuck = not self.outbox_on and all(
            r.status != "queued" for r in self.server.runs) and not self.desktop.outbox.entries()
        return (not pending or stuck) and not self.desktop.outbox.entries()

    def settle(self, on_time: Callable[[float], None] | None = None) -> None:
        """Rounds until nothing is left to happen.  The bound is only a guard against a
        relay that never settles (a bug): every run's time, a tick and a control poll
        each, twice over, past the outage, and at least the 10**6 s the experiments
        once stopped at (a run of a day, ``--median-run 86400``, outlived those)."""
        bound = max(10 ** 6, self.offline_until + 2 * sum(t + self.f.poll + self.f.control
                                                         for t in self.run_times))
        self.run_until(bound, on_time)
        if not self.idle():
            raise RuntimeError(f"the simulated relay did not settle by {bound:,.0f} s")

    def run_until(self, t_end: float, on_time: Callable[[float], None] | None = None) -> None:
        """Rounds from the next tick until ``t_end``, or until nothing is left to happen.
        Ticks are counted in integers (tick k at phase + k·poll): no drift, no float loop."""
        while True:
            t = self.phase + self.k * self.f.poll
            if t > t_end or (t >= self.offline_until and self.idle()):
                return
            d = self.desktop
            d.online = t >= self.offline_until
            if d.online:
                for p in d.tick():
                    self._post(p, t)
                cmds = [x for req in d.sync_requests()
                        for x in self.server.sync(req["project_id"], req["sessions"])]
                d.sync_reply(cmds)
                t = self._work(t, on_time)
                d.round_end()
            # the next tick that is not skipped (the worker was busy until t)
            self.k += 1
            while self.phase + self.k * self.f.poll < t:
                self.k += 1

    def _work(self, t: float, on_time: Callable[[float], None] | None) -> float:
        d = self.desktop
        while True:
            c = d.next_command()
            if c is None:
                return t
            post = d.start_or_refuse(c)
            if post is not None:
                self._post(post, t)
                continue
            self.started[c.command_id] = t
            end = t + self.run_times.pop(0)
            # control polls every 3 s while the Graph runs
            poll = t + self.f.control
            while poll < end:
                if on_time:
                    on_time(poll)
                if d.control_poll(c, self.server.control(c.command_id)):
                    end = poll + self.f.stop  # the stop is sent; the fleet run stops
                    break
                poll += self.f.control
            if on_time:
                on_time(end)
            payload = d.finish(c, "completed", "ok", 10, 0.01)
            self._post(payload, end)
            t = end


# ---------------------------------------------------------------------------------
def pickup_wait(n: int, seed: int, f: Facts) -> Table:
    rng = np.random.default_rng(seed)
    phases = rng.uniform(0, f.poll, n)
    waits = np.empty(n)
    for k in range(n):
        r = Relay(f, phases[k], [f.floor])
        cid = r.submit(f"pickup-run-{k:05d}")
        r.run_until(phases[k] + 1e-9)
        waits[k] = r.started[cid]
    analytic = [f.poll / 2, f.poll / 2, 0.95 * f.poll, f.poll]
    # the distribution: P(wait <= x) at a quarter, half and three quarters of the interval
    qs = [f.poll * q for q in (0.25, 0.5, 0.75)]
    sim_cdf = [float((waits <= x).mean()) for x in qs]
    return Table("1. pickup wait (queued → started), seconds",
                 ["", "mean", "median", "p95", "max"] + [f"P(≤{x:g} s)" for x in qs],
                 [["simulated"] + _stats(waits) + sim_cdf,
                  [f"analytic (uniform 0..{f.poll:g})"] + analytic + [0.25, 0.5, 0.75]],
                 seed, n, f"the relay's phase is uniform over the {f.poll:g} s poll: the wait "
                 f"is Uniform(0, {f.poll:g}); the max is its supremum",
                 ref=[(("simulated",), [None, 9.8, 9.8, 18.9, 20.0, None, None, None])],
                 samples=waits, ref_uses=("poll",),
                 spread=[[None] + _spread(waits) + [share_hw(p, n) for p in sim_cdf],
                         [None] * 8])


def queued_together(n: int, seed: int, f: Facts) -> Table:
    rng = np.random.default_rng(seed)
    rows, spread = [], []
    for batch in (1, 3, 5):
        reps = max(1, n // batch)
        first, last = np.empty(reps), np.empty(reps)
        for k in range(reps):
            r = Relay(f, rng.uniform(0, f.poll), f.run_times(rng, batch).tolist())
            cids = [r.submit(f"batch-{batch}-{k}-{j}") for j in range(batch)]
            r.settle()
            ends = [r.ended[c] for c in cids]
            first[k], last[k] = min(ends), max(ends)
        rows.append([batch, float(np.median(first)), float(np.percentile(first, 95)),
                     float(np.median(last)), float(np.percentile(last, 95))])
        spread.append([None, quantile_hw(first, 0.5), quantile_hw(first, 0.95),
                       quantile_hw(last, 0.5), quantile_hw(last, 0.95)])
    return Table("2. runs queued together: time to results, seconds",
                 ["runs", "first median", "first p95", "last median", "last p95"], rows, seed, n,
                 "one desktop runs one Graph at a time: the last result waits for all the others",
                 ref=[((1,), [1, 74.0, None, 74.0, 254.0]), ((3,), [3, 73.0, None, 233.0, 483.0]),
                      ((5,), [5, 75.0, None, 399.0, 776.0])], ref_uses=TIMING, spread=spread)


STRATEGIES: dict[str, Callable[[int], float]] = {
    "every 2 s": lambda i: 2.0, "every 5 s": lambda i: 5.0, "every 15 s": lambda i: 15.0,
    "every 30 s": lambda i: 30.0,
    # (2.0 ** i overflows a float from i = 1024: a run of a day polled from 2 s)
    "backoff 2,4,8… ≤30": lambda i: min(30.0, 2.0 * 2 ** min(i, 5)),
    "20 s, then every 10 s": lambda i: 20.0 if i == 0 else 10.0,
}


def _done_times(n: int, rng: np.random.Generator, f: Facts) -> np.ndarray:
    """When each of n simulated runs became terminal on the server."""
    phases = rng.uniform(0, f.poll, n)
    times = f.run_times(rng, n)
    done = np.empty(n)
    for k in range(n):
        r = Relay(f, phases[k], [float(times[k])])
        cid = r.submit(f"poll-run-{k:05d}")
        r.settle()
        done[k] = r.ended[cid]
    return done


#: 000's poll table: calls mean, calls p95, delay mean, delay p95
POLL_000 = {"every 2 s": (47.1, 118, 1.0, 1.9), "every 5 s": (19.1, 48, 2.5, 4.8),
            "every 15 s": (6.7, 16, 7.5, 14.2), "every 30 s": (3.6, 8, 14.9, 28.4),
            "backoff 2,4,8… ≤30": (6.6, 11, 14.8, 28.4), "20 s, then every 10 s": (8.8, 23, 5.0, 9.6)}


def _polls(gap: Callable[[int], float], done: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs that became terminal at ``done``, polled at the running sums of
    ``gap(0), gap(1), ...``: how many calls each took to see its status, and how late
    the last one came.  The call times are summed once for every run, one gap at a time
    as each run's loop over its calls summed them (the same floats).

    >>> calls, late = _polls(lambda i: 2.0 ** i, np.array([1.0, 2.5, 7.0]))
    >>> calls.tolist(), late.tolist()
    ([1, 2, 3], [0.0, 0.5, 0.0])
    """
    times: list[float] = []
    t, i, last = 0.0, 0, float(done.max(initial=0.0))
    while True:
        t += gap(i)
        times.append(t)
        i += 1
        if t >= last:
            break
    calls = np.array(times)
    at = np.searchsorted(calls, done, side="left")  # the first call at or after
    return at + 1, calls[at] - done


def poll_strategies(n: int, seed: int, f: Facts) -> Table:
    rows, points, spread = [], [], []
    for row, (name, gap) in enumerate(STRATEGIES.items()):
        # each row its own n runs, as 000 reports it ("2,000 run per riga")
        done = _done_times(n, np.random.default_rng([seed, row]), f)
        calls, delay = _polls(gap, done)
        rows.append([name, float(calls.mean()), float(np.percentile(calls, 95)),
                     float(delay.mean()), float(np.percentile(delay, 95))])
        points.append((name, float(calls.mean()), float(delay.mean())))
        spread.append([None, mean_hw(calls), quantile_hw(calls, 0.95), mean_hw(delay),
                       quantile_hw(delay, 0.95)])
    return Table("3. client poll strategies: get_graph_run calls per run vs delay in noticing",
                 ["strategy", "calls mean", "calls p95", "delay mean s", "delay p95 s"], rows,
                 seed, n, "each row has its own sample of runs", extra={"points": points},
                 ref=[((k,), [k, *v]) for k, v in POLL_000.items()], ref_uses=TIMING,
                 spread=spread)


def cancellation(n: int, seed: int, f: Facts) -> Table:
    rng = np.random.default_rng(seed)
    groups: dict[str, list[float]] = {"still queued": [], "already running": []}
    for k in range(n):
        phase = rng.uniform(0, f.poll)
        at = rng.uniform(0, 40)
        r = Relay(f, phase, f.run_times(rng, 1).tolist())
        cid = r.submit(f"cancel-run-{k:05d}")
        fired = {"done": False}

        def maybe_cancel(t: float) -> None:
            if not fired["done"] and t >= at:
                fired["done"] = True
                r.cancelled_queued = r.server.runs[0].status == "queued"
                r.server.cancel_graph_run(0, cid)

        # a cancel before the first tick (or between rounds) meets a queued run
        if at < phase:
            maybe_cancel(at)
            groups["still queued"].append(0.0)
            continue
        r.settle(on_time=maybe_cancel)
        if not fired["done"]:  # the Graph had ended before the cancel: not counted
            continue
        if r.cancelled_queued:
            groups["still queued"].append(0.0)
        else:
            groups["already running"].append(r.ended[cid] - at)
    rows, spread = [], []
    for g, xs in groups.items():
        a = np.array(xs) if xs else np.zeros(1)
        rows.append([g, len(xs), float(a.mean()), float(np.percentile(a, 95)), float(a.max())])
        spread.append([None, n * share_hw(len(xs) / n, n), mean_hw(a), quantile_hw(a, 0.95),
                       None])
    return Table("4. cancellation at a uniform 0–40 s after queueing: time to terminal, seconds",
                 ["run was", "count", "mean", "p95", "max"], rows, seed, n,
                 f"a queued run is cancelled at once; a running one at the next {f.control:g} s "
                 f"control poll, then its stop ({f.stop:g} s) and its POST ({f.post:g} s), "
                 "both the project's choice (000 gives no figure for either)",
                 ref=[(("still queued",), ["", 523, 0.0, None, None]),
                      (("already running",), ["", 1370, 2.0, 3.3, 3.5])],
                 ref_uses=(*TIMING, "stop", "post", "n"), spread=spread)


def idempotency(n: int, seed: int, f: Facts, reps: int = 3, runs: int = 200) -> Table:
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(1, reps + 1):
        for policy in ("same key", "fresh key per retry"):
            s = GraphServer(seed=seed)
            s.sessions = {SID: {"slug": "s", "project_id": "p"}}  # uploaded by a sync
            calls = 0
            for k in range(runs):
                attempt = 0
                while True:
                    key = f"job-{k}-key" if policy == "same key" else f"job-{k}-try-{attempt}"
                    s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": key})
                    calls += 1
                    attempt += 1
                    if rng.uniform() >= f.loss:  # the answer arrived
                        break
            rows.append([rep, policy, calls, len(s.runs)])
    return Table(f"5. idempotency under loss: {runs} runs, {int(f.loss * 100)} % of answers lost, "
                 f"retry until answered", ["repetition", "client", "calls sent", "runs queued"],
                 rows, seed, runs * reps,
                 "the same key queues each run once; a fresh key per retry runs the side effects "
                 f"again (≈ 1/(1 − {f.loss:g}) runs per job)",
                 ref=[((k, "same key"), [k, "", c, 200]) for k, c in ((1, 270), (2, 291), (3, 275))]
                 + [((k, "fresh key per retry"), [k, "", c, c])
                    for k, c in ((1, 266), (2, 302), (3, 286))], ref_uses=("loss",))


def offline(n: int, seed: int, f: Facts, outage: float = 600.0, runs: int = 5) -> Table:
    rng = np.random.default_rng(seed)
    r = Relay(f, rng.uniform(0, f.poll), f.run_times(rng, runs).tolist())
    r.offline_until = outage
    cids = [r.submit(f"offline-{k}") for k in range(runs)]
    r.run_until(outage - 1)
    during = sorted({run.status for run in r.server.runs})
    r.settle()
    first = min(r.started[c] for c in cids) - outage
    last = max(r.ended[c] for c in cids) - outage
    return Table(f"6. {runs} runs queued while the desktop is offline for {outage:.0f} s",
                 ["statuses during the outage", "first start after return s",
                  "last completion after return s"],
                 [[", ".join(during), first, last]], seed, runs,
                 "the queue is on the server: nothing is lost, the runs start at the first tick "
                 "after the desktop is back. 000's 131 s for five runs cannot come from its own "
                 "set-up (one at a time, median 60 s, at least 5 s each): it does not say how",
                 ref=[((", ".join(during),), ["queued", 3.0, 131.0])], ref_uses=TIMING)


def lost_post(n: int, seed: int, f: Facts) -> Table:
    rng = np.random.default_rng(seed)
    rows = []
    drawn = [(rng.uniform(0, f.poll), f.run_times(rng, 1).tolist()) for _ in range(2)]
    # an hour, or longer if a run takes more (--min-run 5000: the outbox's run was still
    # "running" after an hour, as if the outbox lost it)
    horizon = max(3_600.0, *(2 * (rt[0] + f.poll + f.control) for _, rt in drawn))
    for outbox, (phase, rt) in zip((True, False), drawn):
        r = Relay(f, phase, rt, outbox=outbox)
        cid = r.submit("lost-post")
        r.lose_next_post = True
        r.run_until(horizon)
        run = r.server.runs[0]
        # measured from the run's start, as 000 reports it ("delivered 40 s after start")
        delay = r.ended[cid] - r.started[cid] if cid in r.ended else float("inf")
        rows.append(["on" if outbox else "off", run.status, round(rt[0], 2),
                     "never" if math.isinf(delay) else round(delay, 2)])
    after = "1 h" if horizon == 3_600 else f"{horizon:,.0f} s"
    return Table("7. one completion POST lost", ["outbox", f"final status (after {after})",
                                                 "run time s", "delivered after start s"],
                 rows, seed, 1,
                 "without the outbox the run stays running forever: the stuck-running failure "
                 "(one run each: its own run time decides the figure)",
                 ref=[(("on",), ["on", "completed", None, 40.0]),
                      (("off",), ["off", "running", None, "never"])], ref_uses=TIMING)


def result_limits(n: int, seed: int, f: Facts) -> Table:
    rows = []
    for name, unit in (("ASCII", "a"), ("Japanese", "日"), ("emoji", "😀")):
        lo, hi = 0, RESULT_LIMIT
        while lo < hi:  # the longest result text whose completion is posted whole
            mid = (lo + hi + 1) // 2
            p = completion_payload("00000000-0000-4000-8000-000000000000", "completed",
                                   unit * mid, 12_345, 0.1234)
            if "result" in p:
                lo = mid
            else:
                hi = mid - 1
        text = unit * lo
        rows.append([name, lo, len(text.encode("utf-16-le")) // 2, len(text.encode("utf-8"))])
    return Table("8. the longest result that is still posted whole",
                 ["text", "characters", "UTF-16 units", "UTF-8 bytes"], rows, seed, 1,
                 "the limit is JSON.stringify's length: UTF-16 code units of compact JSON, "
                 "not bytes (an emoji counts 2); 000's envelope is a little shorter than ours "
                 "(its ids and figures are not given)",
                 ref=[(("ASCII",), ["ASCII", 99_899, 99_899, 99_899]),
                      (("Japanese",), ["Japanese", 99_899, 99_899, 299_697])])


EXPERIMENTS = (pickup_wait, queued_together, poll_strategies, cancellation, idempotency, offline,
               lost_post, result_limits)


def run_all(n: int = 2_000, seed: int = 0, facts: Facts | None = None,
            starting: Callable[[int, str], None] | None = None) -> list[Table]:
    """Every experiment's table; ``starting(i, name)`` is told as experiment ``i`` (from
    1) starts (runs of a day, ``--median-run 86400``, take minutes an experiment)."""
    f = facts or Facts()
    out = []
    for i, e in enumerate(EXPERIMENTS, 1):
        if starting is not None:
            starting(i, e.__name__.replace("_", " "))
        t = e(n, seed, f)
        t.compare_at(f, n)
        out.append(t)
    return out


def to_json(tables: list[Table]) -> str:
    return json.dumps([t.as_dict() for t in tables], indent=2, ensure_ascii=False)
