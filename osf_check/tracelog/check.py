"""Does some behaviour of the model explain a recorded log?

The log is read line by line and never held whole: what is kept is the set of model
states the run can be in after the lines read so far.  Before each line, that set is
widened by the hidden steps (the actions no rule names, the ones no station logs) up to
``hidden_depth`` of them in a row; the line then keeps the states where its action is
enabled and leaves the state the line says.  An empty set is the answer "no behaviour
explains this line".  Successors are memoised per (set of states, line meaning), so a
long log of a deployment that repeats itself costs little more than reading it.

A line no behaviour explains is refused only when the model's size is not why: when more
unlogged steps in a row, or a larger bound (a fourth reconnect of a model with three; see
:mod:`.bounds`), might explain it, the answer is unknown.  Where a bound was reached on the
way, the log is read again up to the line by the model with those bounds at their largest,
and by one with a count fewer (:func:`_judge_bounds`): if the largest explains the line,
the answer is unknown and names its parameters; the refusal stands only when the one more
count gave the line nothing to use.

On a failure the log is read again up to that line keeping, for each possible state, how
it was reached: the explanation of the log so far, drawn as a sequence chart.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator

from osf_check.explorer.compiled.pycompile import compile_steps
from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue

from . import HIDDEN_DEPTH
from .bounds import Bounds, bounds_of
from .mapping import Element, Mapping, MappingError, Rule, Source, compile_mapping
from .settings import judge_settings

State = tuple
#: memo sizes past which the memos start again (memory stays bounded on any log)
MEMO_LIMIT = 1_000_000


class LogError(BadValue):
    """A line of the log is malformed or does not fit the mapping (bad input: 150)."""


OBSERVE = -1  # the "action" of an observation: no step, the state as it is


@dataclass
class Candidate:
    """One reading of a line: an action instance (or :data:`OBSERVE`) and what must hold
    around it."""

    action: int
    #: slot, value, the variable, the slot as it is shown (outbox[0]), the logged value
    state: tuple[tuple[int, int, str, str, Any], ...]
    outputs: tuple[tuple[str, str], ...]  # output name, shown value


@dataclass
class LogResult:
    model: str
    explained: bool
    lines: int = 0
    events: int = 0
    ignored: int = 0
    seconds: float = 0.0
    hidden_depth: int = 0
    possible: int = 0  # states possible after the last line read
    peak_possible: int = 0
    failing: dict[str, Any] | None = None
    exercised: list[str] = field(default_factory=list)
    #: properties whose checks the run reached without ever meeting their witness (the
    #: premise that makes them more than vacuous): property id -> the witness said
    unwitnessed: dict[str, str] = field(default_factory=dict)
    trace: dict[str, Any] | None = None
    #: lines whose time is earlier than the line before them, and the first of them
    backwards: int = 0
    first_backwards: int | None = None
    #: at a refusal: the states the line was tried in, and the bounds reached on the way
    before: frozenset = field(default=frozenset(), repr=False)
    reached: set[str] = field(default_factory=set, repr=False)

    @property
    def events_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds > 0 else 0.0

    @property
    def verdict(self) -> str:
        """explained, refused, or unknown (refused only within the hidden-step bound, or
        at the model's bounds)."""
        if self.explained:
            return "explained"
        return "unknown" if self.failing and self.failing["bounded"] else "refused"


def _lines(f: Iterable[str]) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    for n, line in enumerate(f, 1):
        if not line.strip():
            yield n, None, line
            continue
        try:
            ev = json.loads(line)
        except ValueError as e:
            raise LogError(f"line {n}: not JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(ev, dict) or not isinstance(ev.get("event"), str) or \
                not isinstance(ev.get("fields", {}), dict):
            raise LogError(f"line {n}: an event is an object with \"event\" (a string) and "
                           f"\"fields\" (an object), plus \"time\" and \"station\"")
        if "time" in ev and not isinstance(ev["time"], (int, float)):
            raise LogError(f"line {n}: \"time\" must be a number of seconds")
        yield n, ev, line


class LogChecker:
    def __init__(self, model: Model, mapping: Mapping, hidden_depth: int = HIDDEN_DEPTH,
                 bounds: Bounds | None = None):
        self.model = model
        self.bounds = bounds if bounds is not None else Bounds()
        #: the bound parameters some state on the way, or some logged value, reached
        self.reached: set[str] = set()
        self.mapping = mapping
        self.hidden_depth = hidden_depth
        self.steps = compile_steps(model)
        observed = mapping.observed
        self.hidden = [i.index for i in model.instances if i.name not in observed]
        self.interned: dict[str, dict[Any, int]] = {}
        self._closures: dict[State, dict[State, tuple[int, ...]]] = {}
        self._bound: dict[tuple, list[Candidate] | str] = {}
        self._next: dict[tuple, frozenset[State]] = {}
        self.taken: set[int] = set()
        #: states whose hidden steps reach further than hidden_depth in a row
        self.cut: set[State] = set()
        self.monitored_props: set[str] = set()  # the monitors that judged some line

    # the hidden steps ---------------------------------------------------------------
    def closure(self, s: State) -> dict[State, tuple[int, ...]]:
        """Every state hidden steps reach from ``s`` (itself included), each with the
        shortest run of hidden actions that reaches it."""
        got = self._closures.get(s)
        if got is not None:
            return got
        out = {s: ()}
        frontier = deque([s])
        for _ in range(self.hidden_depth):
            nxt: deque[State] = deque()
            for u in frontier:
                path = out[u]
                for ai in self.hidden:
                    v = self.steps[ai](u)
                    if v is not None and v not in out:
                        out[v] = path + (ai,)
                        nxt.append(v)
            if not nxt:
                break
            frontier = nxt
        else:  # the bound stopped the search: did it leave states out?
            if any(v is not None and v not in out for u in frontier for ai in self.hidden
                   for v in (self.steps[ai](u),)):
                self.cut.add(s)
        if self.bounds.tops:
            for u in out:
                self.reached |= self.bounds.reached(u)
        if len(self._closures) > MEMO_LIMIT:
            self._closures.clear()
        self._closures[s] = out
        return out

    # a line's meaning -------------------------------------------------------------------
    def _value(self, src: Source, fields: dict[str, Any], n: int, rule: Any) -> Any:
        if src.literal is not None:
            return src.literal
        if src.field not in fields:
            raise LogError(f"line {n}: event {rule.event!r} has no field {src.field!r}, which "
                           f"the mapping reads")
        v = fields[src.field]
        if src.namespace is not None:
            try:
                seen = self.interned.setdefault(src.namespace, {})
                return seen.setdefault(v, len(seen))
            except TypeError:
                raise LogError(f"line {n}: field {src.field!r} ({v!r}) cannot name a "
                               f"{src.namespace}") from None
        if src.table is not None:
            key = v if isinstance(v, str) else json.dumps(v)
            out = src.table.get(key, src.otherwise)
            if out is None:
                raise LogError(f"line {n}: field {src.field!r} is {v!r}, which the mapping's "
                               f"map does not translate (add it, or an else)")
            return out
        return v

    def meaning(self, rule: Rule, fields: dict[str, Any], n: int) -> list[Candidate] | str:
        """The line's candidates (or, when none fits the model, why)."""
        vals = (tuple(None if s.any else self._value(s, fields, n, rule)
                      for s in rule.args.values()),
                tuple((self._at(i, fields, n, rule), self._value(s, fields, n, rule))
                      for _, i, s in rule.state),
                tuple(self._value(s, fields, n, rule) for s in rule.outputs.values()))
        key = (id(rule), vals)
        try:
            got = self._bound.get(key)
        except TypeError:  # a field read as it is holds a list or an object: not memoised
            return self._bind(rule, *vals)
        if got is None:
            got = self._bind(rule, *vals)
            if len(self._bound) > MEMO_LIMIT:
                self._bound.clear()
            self._bound[key] = got
        return got

    def _bind(self, rule: Rule, args: tuple, state: tuple, outputs: tuple) -> list[Candidate] | str:
        m = self.model
        out: list[Candidate] = []
        why = ""
        for ai in rule.instances or [OBSERVE]:
            inst = m.instances[ai] if ai != OBSERVE else None
            named = inst.args if inst is not None else dict(zip(rule.args, args))
            try:
                for (a, src), v in zip(rule.args.items(), args):
                    if inst is None:  # an observation: its args only name indices
                        continue
                    if src.any:
                        if a not in inst.args:
                            raise ValueError("")
                        continue
                    dom = inst.arg_domains.get(a)  # type: ignore[union-attr]
                    try:
                        want = dom.parse(v) if dom is not None else v
                    except BadValue:  # beyond the domain: the model's bound, if it sizes it
                        self.reached |= self.bounds.of_arg.get((inst.name, a), frozenset())
                        raise
                    if inst.args.get(a) != want:  # type: ignore[union-attr]
                        raise ValueError("")
                cons = []
                for (var, idx, _), (at, v) in zip(rule.state, state):
                    x = m.var_by_name[var]
                    if isinstance(idx, Element):
                        k, shown, dom = self._element(var, idx, named, at)
                    else:
                        k = _pick(idx, named, at)
                        if idx is not None and not (isinstance(k, int) and 0 <= k < (x.length or 0)):
                            self.reached |= self.bounds.of_var.get(var, frozenset())
                            raise ValueError(f"{var}[{k}] is beyond the model's parameters")
                        shown, dom = var if idx is None else f"{var}[{k}]", x.domain
                    try:
                        cons.append((x.slots[k], dom.parse(v), var, shown, v))
                    except BadValue as e:
                        self.reached |= self.bounds.of_var.get(var, frozenset())
                        raise ValueError(f"{var}: {e} (beyond the model's parameters?)") from None
                outs = tuple((o, str(v)) for o, v in zip(rule.outputs, outputs))
            except (ValueError, BadValue) as e:
                why = why or str(e)
                continue
            out.append(Candidate(ai, tuple(cons), outs))
        return out or (why or f"no instance of {rule.action} has these arguments "
                              f"({', '.join(f'{a}={v}' for a, v in zip(rule.args, args))})")

    def _at(self, idx: Any, fields: dict[str, Any], n: int, rule: Rule) -> Any:
        """The line's values of the fields an index reads (None: it reads none)."""
        if isinstance(idx, Source):
            return self._value(idx, fields, n, rule)
        if isinstance(idx, Element):
            return tuple(self._value(s, fields, n, rule) for s in idx.sources())
        return None

    def _element(self, var: str, path: Element, named: dict[str, Any], at: tuple) -> tuple:
        """The slot offset, the name as shown (``stage[1][0]``) and the domain of one
        scalar of a structured variable, for these arguments and this line's fields."""
        k, keys, fed = path.offset, iter([]), iter(at)
        got = []
        for index, dom, length, stride in path.steps:
            key, lo = _pick(index, named, next(fed) if isinstance(index, Source) else None), dom.lo
            if isinstance(key, str):  # a field naming a key (an enum's name): the domain reads it
                try:
                    key = dom.parse(key)
                except BadValue:
                    pass
            if not (isinstance(key, int) and not isinstance(key, bool) and lo <= key < lo + length):
                self.reached |= self.bounds.of_var.get(var, frozenset())
                raise ValueError(f"{var}{path.text} with index {key} is beyond the model's "
                                 f"parameters")
            k += (key - lo) * stride
            got.append(dom.show(key))
        keys = iter(got)
        shown = var + re.sub(r"\[[^\]]+\]", lambda _: f"[{next(keys)}]", path.text)
        return k, shown, path.domain

    # one line -----------------------------------------------------------------------------
    def _fits(self, c: Candidate, before: State, after: State) -> bool:
        for slot, v, *_ in c.state:
            if after[slot] != v:
                return False
        if c.outputs:
            inst = self.model.instances[c.action]
            for o, want in c.outputs:
                if str(inst.output(o, before)) != want:
                    return False
        return True

    def step(self, c: Candidate, t: State) -> State | None:
        """The state after ``c`` from ``t`` if the line can be read so there, else None."""
        u = t if c.action == OBSERVE else self.steps[c.action](t)
        return u if u is not None and self._fits(c, t, u) else None

    def advance(self, possible: frozenset[State], cands: list[Candidate]) -> frozenset[State]:
        key = (possible, tuple((c.action, c.state, c.outputs) for c in cands))
        got = self._next.get(key)
        if got is not None:
            return got
        new: set[State] = set()
        for s in possible:
            for t, _ in self.closure(s).items():
                for c in cands:
                    u = self.step(c, t)
                    if u is not None:
                        new.add(u)
                        if c.action != OBSERVE:
                            self.taken.add(c.action)
        got = frozenset(new)
        if len(self._next) > MEMO_LIMIT:
            self._next.clear()
        self._next[key] = got
        return got

    def monitored(self, ev: dict[str, Any], n: int) -> str | None:
        """Why a monitor of the line's event finds its property broken, or None."""
        from .monitors import MONITORS
        for mo in self.mapping.monitors.get(ev["event"], ()):
            vals = {k: self._value(src, ev.get("fields", {}), n, mo) for k, src in
                    mo.fields.items()}
            self.monitored_props.add(mo.property)
            why = MONITORS[mo.property].judge(**vals)
            if why:
                return why
        return None

    def rule_for(self, ev: dict[str, Any], n: int) -> Rule | None:
        rules = self.mapping.rules.get(ev["event"])
        if rules is None:
            if ev["event"] in self.mapping.ignore:
                return None
            raise LogError(f"line {n}: event {ev['event']!r} is not in the mapping (add a "
                           f"[[event]] rule for it, or list it under ignore)")
        fields = ev.get("fields", {})
        for r in rules:
            if r.matches(fields):
                return r
        raise LogError(f"line {n}: no rule for {ev['event']!r} matches its fields "
                       f"(the rules' when: {', '.join(json.dumps(r.when) for r in rules)})")


def check_log(f: Iterable[str], model: Model, mapping: Mapping, *, hidden_depth: int = HIDDEN_DEPTH,
              tick: Callable[[int], None] | None = None,
              reread: Callable[[], Iterable[str]] | None = None,
              upto: int | None = None, judge: bool = True,
              declared: Iterable[str] | None = None) -> LogResult:
    """Stream the log ``f`` through the model; a failure comes back with the line, the
    states possible before it, why none fits, and the explanation so far as a trace.

    ``reread`` gives the log's lines again (a seekable ``f`` is read again from its
    start without it): a refusal met where a bound of the model was reached is then
    judged by reading the log once more with another bound (see :func:`_judge_bounds`);
    without a way to read it again, such a refusal stays unknown.  ``upto``: read no line
    after that one; ``judge=False``: leave a refusal as the model at hand makes it.
    ``declared``: the model's settings (parameters that are not bounds) stated for the
    deployment that wrote the log (default: those under the mapping's ``params``); a
    refusal by a model whose settings were not all stated is unknown (see
    :func:`.settings.judge_settings`)."""
    t0 = time.perf_counter()
    chk = LogChecker(model, mapping, hidden_depth, bounds_of(model))
    res = LogResult(model.name, True, hidden_depth=hidden_depth)
    possible = frozenset(model.initial_states)
    witnesses = Witnesses(model)
    witnesses.see(possible)
    last_time = None
    for n, ev, line in _lines(f):
        if upto is not None and n > upto:
            break
        res.lines = n
        if tick is not None and n % 65536 == 0:
            tick(n)
        if ev is None:
            continue
        if "time" in ev:
            if last_time is not None and ev["time"] < last_time:
                res.backwards += 1
                res.first_backwards = res.first_backwards or n
            last_time = ev["time"]
        rule = chk.rule_for(ev, n)
        if rule is None:
            res.ignored += 1
            continue
        res.events += 1
        cands = chk.meaning(rule, ev.get("fields", {}), n)
        new = chk.advance(possible, cands) if not isinstance(cands, str) else frozenset()
        if not new:
            res.explained = False
            res.failing, res.before = _failure(chk, possible, cands, n, ev, line)
            res.reached = set(chk.reached)
            if reread is None and getattr(f, "seekable", lambda: False)():
                reread = lambda: (f.seek(0), f)[1]  # type: ignore[attr-defined]  # noqa: E731
            if judge:
                _judge_bounds(res, chk, mapping, reread)
                if _settings_may_matter(res.failing):
                    judge_settings(res, chk, mapping, reread, _declared(mapping, declared),
                                   _read_again)
            break
        broken = chk.monitored(ev, n)
        if broken:
            res.explained = False
            res.failing = {"line": n, "event": ev, "text": line.rstrip("\n"), "why": [broken],
                           "possible_before": [], "possible_count": len(possible),
                           "bounded": False, "hidden_cut": False, "limits": None,
                           "settings": None}
            break
        possible = new
        witnesses.see(possible)
        res.peak_possible = max(res.peak_possible, len(possible))
    res.possible = len(possible)
    res.seconds = time.perf_counter() - t0
    reached = set(exercised(model, chk.taken))
    res.unwitnessed = {pid: doc for pid, doc in witnesses.unmet().items() if pid in reached}
    res.exercised = sorted((reached - set(res.unwitnessed)) | chk.monitored_props,
                           key=lambda p: (p[0], int(p[1:]) if p[1:].isdigit() else 0, p))
    return res


class Witnesses:
    """Which properties' witnesses every behaviour that explains the log met: at some line
    each state still possible satisfied it (a state a hidden step passed through is not
    counted, so a witness may be met unseen: the answer errs towards 'not met')."""

    def __init__(self, model: Model):
        from osf_check.explorer.compiled.pycompile import compile_pred
        from osf_check.properties import catalogue
        from osf_check.properties.base import witness_conditions
        props = catalogue.properties_of(model.name)
        self.doc = {p.id: p.witness_doc or "its witness" for p in props}
        self.open = [(pid, compile_pred(e)) for p in props
                     for pid, e in witness_conditions(p, model) if pid == p.id]
        self._seen: set[frozenset] = set()

    def see(self, possible: frozenset) -> None:
        if not self.open or possible in self._seen:  # a long log repeats few sets
            return
        self._seen.add(possible)
        self.open = [(pid, f) for pid, f in self.open if not all(f(s) for s in possible)]

    def unmet(self) -> dict[str, str]:
        return {pid: self.doc[pid] for pid, _ in self.open}


def _judge_bounds(res: LogResult, chk: LogChecker, mapping: Mapping,
                  reread: Callable[[], Iterable[str]] | None) -> None:
    """Whether the model's bounds, rather than the log, are why its line is refused.

    Nothing to judge when no bound was reached on the way.  Otherwise the log is read
    again, up to the line, by the model with the reached bounds at their largest (*big*)
    and by the same with the reached counts one lower (*mid*; the model at hand when no
    count was reached).  The refusal stands only if both refuse the same line, no log
    value went beyond big's sizes, and just before the line big had no state that mid
    lacked, the variables the counts size aside: one more of each count then gave the
    line nothing to use, so no larger bound does (the cut-off the models keep to: a
    count stops behaviour only at its top).  Otherwise the verdict is unknown, and
    ``failing["limits"]`` says what was reached, what each model answered, and with
    which parameters the line is explained if big explains it."""
    fail = res.failing
    assert fail is not None
    fail["limits"] = None
    if not chk.reached:
        return
    b = chk.bounds
    reached = chk.reached
    limits: dict[str, Any] = {"reached": {p: b.values[p][0] for p in sorted(reached)}}
    fail["limits"] = limits
    fail["bounded"] = True  # until the comparison below settles it
    big_params = b.raise_(reached)
    counts = b.below_largest(reached)
    mid_params = {**big_params, **counts} if counts else {}  # {}: the model at hand
    limits["largest"] = big_params
    if any(b.kinds[p] == "size" and p not in big_params for p in reached):
        limits["verdict"] = "a value beyond the largest model"
        return
    if mid_params == big_params:
        limits["verdict"] = "no other bound to compare with"
        return
    if reread is None or mapping.doc is None:
        limits["verdict"] = "the log cannot be read again"
        return
    runs = {}
    for name, params in (("largest", big_params), ("one fewer", mid_params)):
        got = _read_again(chk, res, mapping, reread, params)
        if isinstance(got, str):
            limits["verdict"] = got
            return
        runs[name] = got
        r = got[1]
        if r.explained:
            limits["verdict"] = f"explained by the model at {params_text(params)}" if params \
                else "explained"
            return
        assert r.failing is not None
        if r.failing["line"] != fail["line"]:
            limits["verdict"] = f"the model at {params_text(params)} stops at line " \
                                f"{r.failing['line']}"
            return
        if r.failing["hidden_cut"]:
            limits["verdict"] = f"the model at {params_text(params)} has more unlogged steps in " \
                                f"a row than --hidden-depth searches"
            return
    (m_big, big), (m_mid, mid) = runs["largest"], runs["one fewer"]
    if any(b.kinds[p] == "size" for p in big.reached):
        limits["verdict"] = "a value beyond the largest model"
        return
    changed = set(counts) or set(big_params)
    if not _adds_nothing(m_mid, mid.before, m_big, big.before, b.unsized(changed, chk.model)):
        limits["verdict"] = "one more of " + ", ".join(sorted(changed)) + " adds states"
        return
    limits["verdict"] = "refused at the largest bounds too"
    fail["bounded"] = fail["hidden_cut"]


def _settings_may_matter(fail: dict[str, Any]) -> bool:
    """Whether the model's settings are still to be judged: not when more unlogged steps,
    or a larger bound, are already known to be what the line needs."""
    lim = fail["limits"]
    return not fail["hidden_cut"] and not (lim and lim["verdict"].startswith("explained by"))


def _declared(mapping: Mapping, declared: Iterable[str] | None) -> set[str]:
    return set(mapping.params if declared is None else declared)


def _read_again(chk: LogChecker, res: LogResult, mapping: Mapping,
                reread: Callable[[], Iterable[str]], params: dict[str, int]
                ) -> tuple[Model, LogResult] | str:
    """The log up to the refused line, read by the model with ``params`` changed."""
    if not params:
        return chk.model, res
    m2 = chk.bounds.build(chk.model, params)
    assert mapping.doc is not None
    try:
        mp2 = compile_mapping(m2, mapping.doc, mapping.source)
    except MappingError as e:
        return f"the mapping does not fit the model at {params_text(params)}: {e}"
    assert res.failing is not None
    return m2, check_log(reread(), m2, mp2, hidden_depth=chk.hidden_depth,
                         upto=res.failing["line"], judge=False)


def _pick(idx: Any, named: dict[str, Any], at: Any) -> Any:
    """An index's value: an argument's, a field's (``at``), ``o*F+a``'s, or a number."""
    if isinstance(idx, str):
        return named[idx]
    if isinstance(idx, Source):
        return at
    if isinstance(idx, tuple):
        return named[idx[0]] * idx[1] + named[idx[2]]
    return idx or 0


def params_text(params: dict[str, int]) -> str:
    """``a=1, b=2``: parameters as the messages show them."""
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def _adds_nothing(m_small: Model, small: frozenset[State], m_big: Model, big: frozenset[State],
                  names: list[str]) -> bool:
    """Whether every state of ``big`` is, on the variables ``names``, one of ``small``."""
    def project(m: Model, states: frozenset[State]) -> set[tuple]:
        slots = [i for n in names for i in m.var_by_name[n].slots]
        return {tuple(s[i] for i in slots) for s in states}
    return project(m_big, big) <= project(m_small, small)


def _failure(chk: LogChecker, possible: frozenset[State], cands: list[Candidate] | str,
             n: int, ev: dict[str, Any], line: str) -> tuple[dict[str, Any], frozenset[State]]:
    m = chk.model
    before: dict[State, None] = {}
    for s in sorted(possible):
        before.update(dict.fromkeys(chk.closure(s)))
    why: list[str] = []
    if isinstance(cands, str):
        why.append(cands)
    else:
        for c in cands:
            obs = c.action == OBSERVE
            label = "the state" if obs else m.instances[c.action].label
            en = [(t, t if obs else u) for t in before
                  if obs or (u := chk.steps[c.action](t)) is not None]
            if not en:
                why.append(f"{label} is enabled in none of them")
                continue
            t, u = en[0]
            bad = [f"{shown} = {json.dumps(m.slot_domains[slot].show(u[slot]))} where "
                   f"the log says {json.dumps(logged)}"
                   for slot, v, var, shown, logged in c.state if u[slot] != v]
            said = {} if obs else m.instances[c.action].show_outputs(t)
            bad += [f"answers {o} = {said[o]!r} where the log says {w!r}"
                    for o, w in c.outputs if str(said[o]) != w]
            why.append(f"{label} {'has' if obs else 'leaves'} {'; '.join(bad)}" if bad else
                       f"{label} is enabled, but not after the hidden steps that fit")
    return {"line": n, "event": ev, "text": line.rstrip("\n"), "why": why[:6],
            "possible_before": [m.show_state(s) for s in list(before)[:5]],
            "possible_count": len(before),
            # more unlogged steps in a row might explain it: the answer is then unknown
            "hidden_cut": (cut := any(s in chk.cut for s in possible)), "bounded": cut,
            "limits": None, "settings": None}, frozenset(before)


def exercised(model: Model, taken: set[int]) -> list[str]:
    """The properties whose checks the explained run reached: a transition check (not a
    trivially true one) on an action it took, or an invariant reading a variable one of
    its actions writes."""
    from osf_check.properties import catalogue
    from osf_check.properties.base import reads
    owner = {i: v.name for v in model.variables for i in v.slots}
    written = {owner[slot] for ai in taken for slot in model.instances[ai].updates}
    out = []
    for p in catalogue.properties_of(model.name):
        if any(c.kind == "trans" and any(_checks(c.trans(model, model.instances[ai]))
                                         for ai in taken) for c in p.checks) or \
                set(reads(model, p, "inv")) & written:
            out.append(p.id)
    return out


def _checks(e: Any) -> bool:
    """A transition check that is there and not trivially true."""
    return e is not None and e.op != "true"


def explanation(f: IO[str], model: Model, mapping: Mapping, upto: int, *,
                hidden_depth: int = HIDDEN_DEPTH
                ) -> tuple[list[State], list[int | None], LogChecker, list[Candidate] | str]:
    """A behaviour of the model that explains lines 1..``upto``-1 (read again, keeping how
    each possible state was reached), as states and the action taken into each; with the
    checker as it stood there and the readings of line ``upto`` (empty if it has none)."""
    chk = LogChecker(model, mapping, hidden_depth)
    init = model.initial_states[0]
    back: dict[State, tuple[State | None, tuple[int, ...]]] = {init: (None, ())}
    layers = [back]
    at_upto: list[Candidate] | str = []
    for n, ev, _ in _lines(f):
        rule = chk.rule_for(ev, n) if ev is not None else None
        if rule is None:
            if n >= upto:
                break
            continue
        cands = chk.meaning(rule, ev.get("fields", {}), n)  # type: ignore[union-attr]
        if n >= upto:
            at_upto = cands
            break
        assert not isinstance(cands, str)
        nxt: dict[State, tuple[State | None, tuple[int, ...]]] = {}
        for s in layers[-1]:
            for t, hidden in chk.closure(s).items():
                for c in cands:
                    u = chk.step(c, t)
                    if u is not None and u not in nxt:
                        nxt[u] = (s, hidden + ((c.action,) if c.action != OBSERVE else ()))
        layers.append(nxt)
    # walk back from any state of the last layer
    s: State | None = min(layers[-1])
    runs: list[tuple[int, ...]] = []
    for layer in reversed(layers[1:]):
        prev, acts = layer[s]  # type: ignore[index]
        runs.append(acts)
        s = prev
    states, actions = [init], [None]
    for acts in reversed(runs):
        for ai in acts:
            states.append(chk.steps[ai](states[-1]))
            actions.append(ai)
    return states, actions, chk, at_upto


def failure_trace(path: str, model: Model, mapping: Mapping, res: LogResult,
                  open_log: Callable[[str], IO[str]]) -> dict[str, Any]:
    """The log up to its first unexplained line as a trace: a behaviour that explains the
    lines before it, then (where one exists) the model's own version of that line, the
    step where the model and the log part, drawn red; where none exists, the last step
    (the one that explains the line before) is red: the line cannot follow it."""
    from osf_check.traces.format import make_trace
    fail = res.failing
    assert fail is not None
    with open_log(path) as f:
        states, actions, chk, cands = explanation(f, model, mapping, fail["line"],
                                                  hidden_depth=res.hidden_depth)
    last, read = states[-1], False
    if not isinstance(cands, str):
        for t, hidden in chk.closure(last).items():
            c = next((c for c in cands if c.action != OBSERVE and
                      chk.steps[c.action](t) is not None), None)
            if c is not None:
                for ai in hidden + (c.action,):
                    states.append(chk.steps[ai](states[-1]))
                    actions.append(ai)
                read = True
                break
    message = (f"line {fail['line']} ({fail['event']['event']}) is explained by no behaviour "
               f"of {model.name}: {'; '.join(fail['why'])}")
    if fail.get("limits") and fail["bounded"]:
        message += f" (unknown: the log reached the model's bounds; {fail['limits']['verdict']})"
    elif fail["hidden_cut"]:
        message += " (unknown: more unlogged steps in a row than --hidden-depth might explain it)"
    # "read": the last step is the model's own version of the line (the step where model
    # and log part); otherwise the line has none after the last step, which explains the
    # line before it
    prop = {"id": "log", "name": "explained-by-model", "kind": "check-log",
            "line": fail["line"], "event": fail["event"]["event"], "read": read}
    return make_trace(model, states, actions, prop=prop, message=message, source="check-log")
