"""``osf-check fuzz`` as a library: which systems a run fuzzes, each system's three phases
(tour, goals, Hypothesis), the files a run leaves, and the text the command prints.  The
command line only parses its options, calls these, prints and exits.

The implementation under test is the Python reference implementation in process, or one
behind an adapter command (:class:`ExternalRun`, shared with ``replay``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from osf_check.models.errors import InputError, did_you_mean

__all__ = ["ExternalRun", "Settings", "impl_needs", "systems_for", "checked_params",
           "examples_for", "run_system", "run_json", "text", "share", "failing_seed", "tried",
           "by_answer", "by_prefix", "other_configurations", "by_first_move", "WIDTH"]


def impl_needs(impl: str | None, model: str | None, mutant: str | None) -> None:
    """Refuse ``--impl`` without what it needs (a model; no reference mutant)."""
    if impl is None:
        return
    if not impl.strip():
        raise InputError("--impl is empty: give the command that starts the adapter")
    if model is None:
        raise InputError("--impl needs --model (an adapter implements one model)")
    if mutant is not None:
        raise InputError("--mutant switches on a bug of the Python reference implementation; "
                         "with --impl the adapter's command decides what runs (e.g. --impl "
                         f"'python -m osf_check.driver.reference --mutant {mutant}')")


class ExternalRun:
    """The harness builder of one command: the reference implementation in process, or an
    adapter process (started on first use, stopped at the end of each system's run)."""

    def __init__(self, command: str | None, timeout: float):
        from osf_check.driver.external import External
        self.command = command
        self.ext = External(command, timeout=timeout) if command else None

    @property
    def harness(self) -> Any:
        return self.ext

    def describe(self, model: str) -> dict[str, Any] | None:
        """The adapter, what it can do, and the idle events of ``model`` it could not be
        given (without the idle capability it is judged on the model's steps alone)."""
        if self.ext is None:
            return None
        from osf_check.driver.external import idle_events, late_kinds, skipped_steps
        from osf_check.fuzz.late import LATE
        caps = self.ext.capabilities
        return {"command": self.command, "name": self.ext.implementation,
                "capabilities": sorted(caps),
                "idle_events_not_tried": [] if "idle" in caps else list(idle_events(model)),
                "late_answers_not_tried": [LATE[k] for k in late_kinds(model)
                                           if k not in self.ext.late_kinds],
                "steps_not_offered": list(skipped_steps(model, caps))}

    def __enter__(self) -> "ExternalRun":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.ext is None:
            return
        try:
            self.ext.close()
        except Exception:  # noqa: BLE001
            if exc[0] is None:  # a run that failed already says why; this one would not
                raise


def systems_for(model: str | None, mutant: str | None) -> list[str]:
    """The systems a run fuzzes: ``model``, the one that has ``mutant``, or all."""
    from osf_check.fuzz.driver import IMPL_MUTANTS, SYSTEMS
    from osf_check.properties import catalogue
    if model is not None:
        catalogue.spec(model)  # an unknown model is refused with the known ones
        if model not in SYSTEMS:
            raise InputError(f"{model} has no implementation to fuzz (fuzz knows "
                             f"{' and '.join(SYSTEMS)})")
    if mutant is not None:
        owners = [m for m in SYSTEMS if mutant in IMPL_MUTANTS[m]]
        if model is None and owners:
            model = owners[0]
        if model is None or mutant not in IMPL_MUTANTS[model]:
            where = f"{model} has no" if model else "neither implementation has a"
            known = IMPL_MUTANTS[model] if model else sorted(
                {x for m in SYSTEMS for x in IMPL_MUTANTS[m]})
            raise InputError(f"{where} mutant {mutant!r} ({did_you_mean(mutant, known)}"
                             f"known: {', '.join(known)})")
    return [model] if model else list(SYSTEMS)


def checked_params(model: str | None, mutant: str | None, overrides: dict[str, str]
                   ) -> dict[str, Any]:
    """``--param``'s values, each checked against the model before the work starts."""
    from osf_check.fuzz.driver import model_for
    if overrides and model is None:
        raise InputError("--param needs --model (the two systems have different parameters)")
    if not overrides:
        return {}
    checked = model_for(model, mutant, overrides).params  # type: ignore[arg-type]
    return {k: checked[k] for k in overrides}


def examples_for(profile: str | None, examples: int | None, tour_depth: int | None
                 ) -> tuple[str, int]:
    """The Hypothesis profile and how many examples each system gets."""
    from osf_check.fuzz.profiles import FUZZ_EXAMPLES, current
    prof = profile or current()
    n_ex = examples if examples is not None else FUZZ_EXAMPLES[prof]
    if n_ex == 0 and tour_depth == 0:  # the goals alone: a handful of paths, no coverage
        raise InputError("--examples 0 and --tour-depth 0 leave only the goals' shortest "
                         "paths to run: give one of them a positive value")
    return prof, n_ex


@dataclass
class Settings:
    """What every system of one run is fuzzed with."""

    mutant: str | None
    seed: int
    steps: int
    examples: int
    profile: str
    db: Path | None
    params: dict[str, Any]
    tour_depth: int | None = None

    def depth(self, name: str) -> int:
        from osf_check.fuzz.driver import TOUR_DEPTH
        return self.tour_depth if self.tour_depth is not None else TOUR_DEPTH[name]


def run_system(name: str, s: Settings, external: ExternalRun, disp: Any
               ) -> tuple[Any, float, float]:
    """Fuzz one system: the tour, then (if it found nothing) the goals, then Hypothesis.
    The report, and the seconds of the tour and of the goals."""
    from osf_check.fuzz.driver import tour
    t0 = time.perf_counter()
    with disp, external:
        task = disp.phase(f"{name}: tour to depth {s.depth(name)} (transitions covered)")
        rep = tour(name, mutant=s.mutant, depth=s.depth(name), seed=s.seed, log=disp.line,
                   params=s.params, harness=external.harness,
                   tick=lambda done, total: disp.update(task, completed=done, total=total))
        disp.finish(task)
        t_tour = time.perf_counter() - t0
        if rep.failure is None:
            _goals(rep, name, s, external, disp)
        t_goals = time.perf_counter() - t0 - t_tour
        cfgs, counts = _configurations(rep, name, s)
        # one example in all leaves the own share none (OWN_SHARE rounds down), and
        # Hypothesis refuses to run no example
        if rep.failure is None and counts[0]:
            rep = _hypothesis(rep, name, s, external, disp, counts[0])
        rep.own_seconds = time.perf_counter() - t0
        rep.swept = []
        if rep.failure is None and len(cfgs) > 1 and s.examples:
            _others(rep, name, s, external, disp, cfgs, counts)
        rep.own_examples = counts[0] if s.examples else 0
        if rep.failure is not None and rep.data is None:
            _record_data(rep, name, s, external)
    return rep, t_tour, t_goals


def _record_data(rep: Any, name: str, s: Settings, external: ExternalRun) -> None:
    """The concrete data the failing path hands the implementation, for its trace: a
    replay of the trace alone then hands the same."""
    from osf_check.fuzz.driver import data_along, model_for
    at = s.params if rep.params is None else rep.params
    rep.data = data_along(model_for(name, s.mutant, at), s.mutant, rep.path,
                          seed=failing_seed(rep, s), harness=external.harness)


def failing_seed(rep: Any, s: Settings) -> int:
    """The seed a failure was found at: a later Hypothesis seed's, else the run's."""
    return s.seed if rep.seed is None else rep.seed


def _configurations(rep: Any, name: str, s: Settings) -> tuple[list[dict], list[int]]:
    """The configurations of the model's parameters this run covers (its own first), and
    each one's share of the Hypothesis examples (more where goals were left unmet)."""
    from osf_check.fuzz import sweep
    from osf_check.properties import catalogue
    cfgs = sweep.configurations(catalogue.spec(name), s.params, s.profile)
    return cfgs, sweep.shares(s.examples, sweep.weights(cfgs, s.params, rep.goals))


def _others(rep: Any, name: str, s: Settings, external: ExternalRun, disp: Any,
            cfgs: list[dict], counts: list[int]) -> None:
    """fuzz's fourth phase: the model's other configurations (tour, goals, Hypothesis)."""
    from osf_check.fuzz import sweep
    task = disp.phase(f"{name}: {len(cfgs) - 1} other configurations of the "
                      f"parameters (tour, goals, hypothesis)", total=len(cfgs) - 1)
    rep.swept, failed = sweep.fuzz_others(
        name, cfgs, counts, mutant=s.mutant, seed=s.seed, steps=s.steps, profile=s.profile,
        depth=min(s.depth(name), sweep.MAP_DEPTH), harness=external.harness,
        db=str(s.db) if s.db else None,
        tick=lambda done, total: disp.update(task, completed=done))
    disp.finish(task)
    if failed is not None:
        rep.failure, rep.path, rep.params = failed.failure, failed.path, failed.params
        rep.data, rep.seed = failed.data, failed.seed


def _goals(rep: Any, name: str, s: Settings, external: ExternalRun, disp: Any) -> None:
    """fuzz's second phase: the implementation driven to each property's goals."""
    from osf_check.fuzz import goals
    task = disp.phase(f"{name}: goals (each property's premise and limits, pressed)",
                      total=len(goals.of(name)))
    rep.goals, failed = goals.reach(
        name, mutant=s.mutant, seed=s.seed, params=s.params, harness=external.harness,
        tick=lambda done, total: disp.update(task, completed=done, total=total))
    disp.finish(task)
    disp.line(goals.summary([g.json() for g in rep.goals]))
    if failed is not None:
        rep.failure, rep.path, rep.params = failed


def _hypothesis(rep: Any, name: str, s: Settings, external: ExternalRun, disp: Any,
                examples: int) -> Any:
    """fuzz's third phase: Hypothesis's state-machine walks from the tour's states."""
    from osf_check.fuzz.driver import hypothesis_run
    from osf_check.fuzz.profiles import seeds
    walk_seeds = seeds(s.profile, s.seed, examples)
    task = disp.phase(f"{name}: hypothesis, {examples} examples of up to {s.steps} "
                      f"steps, profile {s.profile}, seeds "
                      f"{', '.join(map(str, walk_seeds))}", total=examples)
    rep = hypothesis_run(name, mutant=s.mutant, examples=examples, steps=s.steps,
                         seed=s.seed, seeds=walk_seeds, profile=s.profile, rep=rep,
                         start_depth=min(s.depth(name), 8), params=s.params,
                         db=str(s.db) if s.db else None,
                         hypothesis_shrink=s.profile == "nightly",
                         harness=external.harness,
                         tick=lambda done, total: disp.update(task, completed=done))
    disp.finish(task)
    return rep


def run_json(rep: Any, name: str, s: Settings, external: ExternalRun, seconds: float,
             t_tour: float, t_goals: float, out: Path | None) -> tuple[dict[str, Any],
                                                                     list[Path]]:
    """One system's part of fuzz.json (with a failure's trace), and the files written to
    ``out``: the coverage plot, and a failure's trace and pictures."""
    from osf_check import report
    from osf_check.fuzz.driver import model_for, parted_along, path_trace
    # the hypothesis phase's time is the run's own configuration's (each other one has its
    # own seconds); the run's seconds are all of it
    run = report.fuzz_run_json(rep, name, s.mutant, s.depth(name),
                               getattr(rep, "own_seconds", seconds), t_tour, t_goals, s.params)
    run["seconds"] = round(seconds, 2)
    run["configurations"] = [{"params": s.params, "examples": getattr(rep, "own_examples", 0),
                              "own": True}] + getattr(rep, "swept", [])
    run["implementation"] = external.describe(name)
    pictures = _coverage_plot(rep, name, s, out) if out is not None else []
    if rep.failure:
        at = s.params if rep.params is None else rep.params
        m, seed = model_for(name, s.mutant, at), failing_seed(rep, s)
        tr = path_trace(m, rep.path, message=rep.failure, mutant=s.mutant, seed=seed,
                        data=rep.data, parted=parted_along(m, s.mutant, rep.path, seed=seed,
                                                           harness=external.harness))
        run["trace"] = tr
        if out is not None:
            stem = f"{name}{'-' + s.mutant if s.mutant else ''}-fuzz"
            report.write_outputs(out, tr, stem, report.err)
    return run, pictures


def _coverage_plot(rep: Any, name: str, s: Settings, out: Path) -> list[Path]:
    from osf_check import plots
    mutant = s.mutant
    fig = plots.fuzz_coverage(rep.coverage, rep.states_total, rep.edges_total,
                              f"{name}{' (implementation mutant ' + mutant + ')' if mutant else ''}"
                              f": tour to depth {s.depth(name)}, seed {s.seed}")
    return plots.save(fig, out / f"fuzz-coverage-{name}{'-' + mutant if mutant else ''}")


def share(part: int, whole: int) -> str:
    """``part``/``whole`` and its percentage (none of nothing).

    >>> share(3, 4), share(0, 0)
    ('3/4 (75.0%)', '0/0')
    """
    return f"{part:,}/{whole:,}" + (f" ({100 * part / whole:.1f}%)" if whole else "")


def text(runs: list[dict[str, Any]], s: Settings) -> str:
    """What the command prints of its runs (without the last line, the exit)."""
    return "".join(line + "\n" for run in runs for line in _run_lines(run, s))


def _run_lines(run: dict[str, Any], s: Settings) -> list[str]:
    from osf_check.traces import render as rnd
    tr_, hy = run["tour"], run["hypothesis"]
    who = f" (implementation mutant {s.mutant})" if s.mutant else ""
    if run["implementation"]:
        who = f" (adapter: {run['implementation']['name']})"
    lines = [f"{run['model']}{who}: seed {s.seed}, profile {s.profile}",
             f"  tour to depth {tr_['depth']}: {rnd.n_steps(tr_['steps'])} in "
             f"{tr_['seconds']:.1f} s, states {share(*tr_['states'])}, "
             f"transitions {share(*tr_['transitions'])}"
             + (f", {tr_['taken_together']:,} of them taken together with another step"
                if tr_.get("taken_together") else "")]
    skipped = (run["implementation"] or {}).get("idle_events_not_tried")
    if skipped:
        lines.append(f"  idle events not tried (the adapter lacks the idle capability): "
                     f"{', '.join(skipped)}")
    unsent = (run["implementation"] or {}).get("late_answers_not_tried")
    if unsent:
        why = "does not list them in late_kinds" if "late" in \
            run["implementation"]["capabilities"] else "lacks the late capability"
        lines.append(f"  late answers not tried (the adapter {why}): {', '.join(unsent)}")
    left = (run["implementation"] or {}).get("steps_not_offered")
    if left:
        lines.append(f"  model steps not offered (the adapter lacks the late_steps capability; "
                     f"left out of the tour, goals, walks and coverage): {', '.join(left)}")
    if run["goals"]["each"]:
        from osf_check.fuzz.goals import summary
        lines.append("  " + summary(run["goals"]["each"], run["goals"]["seconds"]))
    lines += _hypothesis_lines(hy)
    lines += tried("data classes tried", run.get("data_classes") or [], "by subject",
                   by_prefix)
    lines += tried("late answers tried", run.get("late_answers") or [],
                   "by answer, each after the steps listed", by_answer)
    lines += other_configurations(run)
    if run["failure"]:
        lines += [f"FAILURE: {run['failure']}", rnd.text(run["trace"])]
    return lines


#: the console's width: the lists of what a run tried are wrapped to it
WIDTH = 80


def tried(title: str, items: list[str], how: str,
          grouping: Callable[[list[str]], list[tuple[str, list[str]]]], extra: str = "",
          note: Callable[[list[str]], str] | None = None) -> list[str]:
    """The console's lines for a list of what a run tried (``fuzz.json`` keeps each item).

    On one line when it fits in :data:`WIDTH` columns; else the count, ``how`` the items
    are grouped, and one group a line (its label, its size, its members), wrapped.

    Parameters
    ----------
    title : str
        What was tried, e.g. ``"late answers tried"``.
    items : list of str
        Every item, sorted (as ``fuzz.json`` has them).
    how : str
        How ``grouping`` groups them, said after the count.
    grouping : callable
        Items to ``(label, members)`` pairs, every item in one of them.
    extra : str, optional
        Said after the count, e.g. ``", 12 examples"``.
    note : callable, optional
        A group's members to what is said after its size, e.g. ``", all clean"``.

    Returns
    -------
    list of str
        No line for no item.

    Examples
    --------
    >>> tried("x tried", ["key a", "key b"], "by subject", by_prefix)
    ['  x tried: 2 (key a; key b)']
    >>> for line in tried("x tried", [f"key {n:02}" for n in range(24)] + ["y"],
    ...                   "by subject", by_prefix):
    ...     print(line)
      x tried: 25, by subject
        key (24): 00; 01; 02; 03; 04; 05; 06; 07; 08; 09; 10; 11; 12; 13; 14; 15;
          16; 17; 18; 19; 20; 21; 22; 23
        others (1): y
    """
    if not items:
        return []
    one = f"  {title}: {len(items)}{extra} ({'; '.join(items)})"
    if len(one) <= WIDTH:
        return [one]
    lines = _cut(f"  {title}: {len(items)}{extra}, {how}", " " * 6)
    for label, members in grouping(items):
        said = note(members) if note else ""
        lines += _packed(f"    {label} ({len(members)}{said}): ", members, " " * 6)
    return lines


def _packed(head: str, members: list[str], indent: str) -> list[str]:
    """``head`` and ``members`` joined by ``; ``, in lines of at most :data:`WIDTH`
    columns, the later ones indented by ``indent``; a line breaks between two members
    (inside one only when it is wider than a line by itself).

    >>> _packed("  a: ", ["one", "two", "three"], "    ")
    ['  a: one; two; three']
    """
    lines, line = [], head
    for k, m in enumerate(members):
        word = m + (";" if k < len(members) - 1 else "")
        if line == head:
            # a member too wide to follow the label, but not for a line of its own, is not
            # cut: the label stands alone
            if len(head) + len(word) > WIDTH >= len(indent) + len(word):
                lines.append(head.rstrip())
                line = indent
            line += word
        elif len(line) + 1 + len(word) <= WIDTH:
            line += " " + word
        else:
            lines.append(line)
            line = indent + word
    lines.append(line)
    return [part for ln in lines for part in _cut(ln, indent)]


def _cut(line: str, indent: str) -> list[str]:
    """A line wider than :data:`WIDTH` (one member too wide for a line of its own) cut at
    its spaces."""
    import textwrap
    if len(line) <= WIDTH:
        return [line]
    body = line[len(indent):] if line.startswith(indent) else line
    first = line[:len(line) - len(body)]
    return textwrap.wrap(body, WIDTH, initial_indent=first, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


#: how a configuration whose run failed is marked in the console (fuzz.json has its failure)
FAILED = " (failed)"


def other_configurations(run: dict[str, Any]) -> list[str]:
    """The console's lines for the configurations a run fuzzed besides its own: each as
    the parameters it moves from the run's own, grouped by :func:`by_first_move`.

    A failure stops the sweep, so the one that failed is the last; ``fuzz.json`` keeps
    every configuration whole (its parameters, tour, goals, examples and failure).

    Parameters
    ----------
    run : dict
        One system's part of ``fuzz.json``: its ``model`` and ``configurations`` (the
        run's own first).

    Returns
    -------
    list of str
        No line when the run fuzzed no other configuration.

    Examples
    --------
    >>> other_configurations({"model": "graph-relay", "configurations": [
    ...     {"params": {}, "examples": 4}, {"params": {"agents": 3}, "examples": 2},
    ...     {"params": {"intents": 1}, "examples": 2, "failure": "A1 violated"}]})
    ['  other configurations: 2, 4 examples, 1 failed (agents=3; intents=1 (failed))']
    """
    own, *other = run["configurations"]
    if not other:
        return []
    order = _param_order(run["model"], [c["params"] for c in run["configurations"]])
    moved = sorted(((_moves(c["params"], own["params"], order), c.get("failure"))
                    for c in other), key=lambda m: _first_move_key(m[0], order))
    items = [" ".join(f"{k}={_word(v)}" for k, v in moves) + (FAILED if failure else "")
             for moves, failure in moved]
    failed = sum(1 for c in other if c.get("failure"))
    verdict = f"{failed} failed" if failed else "all clean"
    also = " ".join(f"{k}={_word(v)}" for k, v in own["params"].items())
    title = "other configurations" + (f" (each also {also})" if also else "")
    return tried(title, items, "by first parameter moved",
                 by_first_move, extra=f", {sum(c['examples'] for c in other):,} examples, "
                 f"{verdict}", note=_group_verdict)


def _param_order(model: str, configs: list[dict[str, Any]]) -> list[str]:
    """The model's parameters in the order it declares them (a protocol engineer's: the
    sizes first), then any other a configuration names."""
    from osf_check.properties import catalogue
    try:
        names = [p.name for p in catalogue.spec(model).params]
    except InputError:  # a model the catalogue does not know: the configurations' order
        names = []
    return names + [k for c in configs for k in c if k not in names]


def _moves(params: dict[str, Any], own: dict[str, Any], order: list[str]
           ) -> list[tuple[str, Any]]:
    """The parameters a configuration sets otherwise than the run's own, in ``order``."""
    return sorted(((k, v) for k, v in params.items() if own.get(k, object()) != v),
                  key=lambda kv: order.index(kv[0]))


def _first_move_key(moves: list[tuple[str, Any]], order: list[str]) -> tuple:
    """Configurations by their first move's parameter, those that move it alone first,
    then by its value (numbers in their order)."""
    if not moves:
        return (-1,)
    k, v = moves[0]
    return (order.index(k), len(moves) > 1, not isinstance(v, (int, float)),
            v if isinstance(v, (int, float)) else 0, str(v))


def _word(value: Any) -> str:
    # one word per parameter, so that a configuration reads back split at its spaces
    return str(value).replace(" ", "")


def _group_verdict(members: list[str]) -> str:
    failed = sum(m.endswith(FAILED) for m in members)
    return f", {failed} failed" if failed else ", all clean"


def by_first_move(items: list[str]) -> list[tuple[str, list[str]]]:
    """Configurations (``name=value`` words, the first parameter they move first) by that
    move: those that move that parameter alone are a group under its name, listed by
    value; the others are a group per ``name=value``, listed by the rest of their moves.
    A configuration's :data:`FAILED` mark stays with it.

    >>> by_first_move(["agents=3", "intents=1", "intents=3 (failed)", "intents=1 slugs=1",
    ...                "intents=1 slugs=3 projects=2"])
    [('agents', ['3']), ('intents', ['1', '3 (failed)']), ('intents=1', ['slugs=1', \
'slugs=3 projects=2'])]
    """
    groups: dict[str, list[str]] = {}
    for item in items:
        bare = item.removesuffix(FAILED)
        first, _, rest = bare.partition(" ")
        label, member = (first, rest) if rest else (first.partition("=")[0],
                                                    first.partition("=")[2])
        groups.setdefault(label, []).append(member + item[len(bare):])
    return list(groups.items())


def by_answer(items: list[str]) -> list[tuple[str, list[str]]]:
    """Late answers (``<answer> after <step>``) by answer: the steps each came after.

    >>> by_answer(["a sync reply after sync", "a sync reply after tick", "x after y"])
    [('a sync reply', ['sync', 'tick']), ('x', ['y'])]
    """
    groups: dict[str, list[str]] = {}
    for item in items:
        answer, _, after = item.partition(" after ")
        groups.setdefault(answer, []).append(after)
    return list(groups.items())


def by_prefix(items: list[str]) -> list[tuple[str, list[str]]]:
    """Items by the words they begin with: the items that share their first word are a
    group, labelled by the words all of them begin with and listed by the rest (in
    alphabetical order, whatever the case); an item whose first word no other item has
    is listed whole in a last group, ``others``.  Words are compared without a ``:`` or
    ``,`` after them (``error: none`` and ``error past the cut`` are both errors).

    >>> by_prefix(["key a", "key b", "pending id, x", "pending id, y", "z"])
    [('key', ['a', 'b']), ('pending id', ['x', 'y']), ('others', ['z'])]
    """
    firsts: dict[str, list[list[str]]] = {}
    alone = []
    for item in items:
        words = item.split(" ")
        if len(words) == 1:
            alone.append(item)
        else:
            firsts.setdefault(_bare(words[0]), []).append(words)
    groups = []
    for group in firsts.values():
        if len(group) == 1:
            alone.append(" ".join(group[0]))
            continue
        n = _shared(group)
        groups.append((" ".join(group[0][:n]).rstrip(":,"),
                       sorted((" ".join(words[n:]) for words in group), key=str.casefold)))
    return groups + ([("others", sorted(alone, key=str.casefold))] if alone else [])


def _bare(word: str) -> str:
    return word.rstrip(":,")


def _shared(group: list[list[str]]) -> int:
    """How many words every item of ``group`` begins with, leaving each at least one."""
    n = 1
    while all(len(w) > n + 1 for w in group) and \
            len({_bare(w[n]) for w in group}) == 1:
        n += 1
    return n


def _hypothesis_lines(hy: dict[str, Any]) -> list[str]:
    from osf_check.traces import render as rnd
    rate = f", {hy['examples_per_second']} examples/s" if hy["examples_per_second"] else ""
    seeds = hy.get("seeds") or []
    at = f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})" if seeds else ""
    lines = [f"  hypothesis: {hy['examples']:,} examples{at}, {hy['steps']:,} steps in "
             f"{hy['seconds']:.1f} s{rate}, {hy['distinct_model_states']:,} distinct model "
             f"states"]
    if hy["map_states"]:
        lines.append(f"    of the {rnd.counted(hy['map_states'], 'state')} within depth "
                     f"{hy['map_depth']}: {hy['map_states_visited']:,} "
                     f"({100 * hy['map_states_visited'] / hy['map_states']:.1f}%); "
                     f"{rnd.counted(hy['states_beyond_map'], 'state')} beyond that depth")
    far = hy.get("long_stories_out_of_reach") or {}
    shown = {k: v for k, v in hy["long_stories"].items() if k not in far}
    if shown:
        lines.append("    long stories (distinct states): " + ", ".join(
            f"{k} {v:,}" for k, v in shown.items()))
    if far:
        lines.append("    out of reach at these parameters: " + ", ".join(
            f"{k} (--param {p})" for k, p in far.items()))
    return lines
