"""Turning results into what people and machines read: text, JSON, trace files."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from osf_check.explorer.check import EXIT, ModelResult
from osf_check.explorer.result import Violation
from osf_check.properties.base import reads, undecided
from osf_check.traces import render
from osf_check.output import atomic_write
from osf_check.traces.format import dumps, make_trace, to_itf

SCHEMA_VERSION = 1


def violation_trace(r: ModelResult, v: Violation, seed: int) -> dict[str, Any]:
    ex, m = r.exploration, r.model
    states = ex.trace_states(v)
    prop = {p.id: p for p in r.properties}.get(v.prop)
    info: dict[str, Any] = {"id": v.prop, "name": v.prop, "kind": v.kind, "kinds": v.kind}
    if prop is not None:
        last = v.actions[-1] if v.actions and v.actions[-1] >= 0 else None
        inst = m.instances[last] if last is not None and v.kind == "trans" else None
        info.update(name=prop.name, kinds=prop.kinds, reads=reads(m, prop, v.kind, inst))
    return make_trace(m, states, [None if a < 0 else a for a in v.actions], prop=info,
                      message=v.message, seed=seed, loop_start=v.loop_start,
                      stutters=v.stutters,
                      assumptions=[a for a, on in r.assumptions.items() if on])


def _first_kind(p: Any) -> str:
    return p.checks[0].kind


def _stem_model(r: ModelResult) -> str:
    return f"{r.model.name}-{r.model.mutant}" if r.model.mutant else r.model.name


def _stem(r: ModelResult, v: Violation) -> str:
    return f"{_stem_model(r)}-{v.prop}-{v.kind}"


def write_outputs(out: Path, tr: dict[str, Any], stem: str, note: Callable[[str], None]) -> list[Path]:
    """The trace as JSON, ITF, DOT, Mermaid, and SVG when a renderer exists."""
    files: dict[str, str | bytes] = {
        f"{stem}.trace.json": dumps(tr),
        f"{stem}.itf.json": dumps(to_itf(tr)),
        f"{stem}.txt": render.text(tr),
        f"{stem}.sequence.mmd": render.mermaid_sequence(tr),
        f"{stem}.graph.mmd": render.mermaid_graph(tr),
    }
    dots = {"sequence": render.dot_sequence(tr).to_string(), "graph": render.dot_graph(tr).to_string()}
    for view, d in dots.items():
        files[f"{stem}.{view}.dot"] = d
    exe = render.find_renderer()
    if exe is None:
        note("no Graphviz renderer found ($OSF_DOT, dot, graphviz-pure): SVG not written")
    else:
        for view, d in dots.items():
            try:
                files[f"{stem}.{view}.svg"] = render.render_dot(d, "svg", exe)
            except render.RenderError as e:
                note(f"{view} picture not rendered: {e}")
    written = []
    for name, data in files.items():
        atomic_write(out / name, data)
        written.append(out / name)
    return written


def _property_json(r: ModelResult, p: Any) -> dict[str, Any]:
    """One property of an explore run, claiming no more than the text: a bounded run's
    "holds" is up to its depth (``up_to_depth``; null when every state was explored), and
    its reach premise states on the bound were not judged (``undecided``)."""
    ex = r.exploration
    return {"id": p.id, "name": p.name, "kind": p.kinds, "status": r.status[p.id],
            "assumptions": list(p.assumptions),
            "up_to_depth": None if ex.complete else ex.depth_reached,
            "undecided": r.graph.undecided.get(p.id, 0) if r.graph else 0}


def memory_json(ex: Any) -> dict[str, Any]:
    """The run's memory budget (``None``: none) and what went to disk under it."""
    got = getattr(ex, "spill", None)
    return dict(got) if got else {"budget": None, "spilled_bytes": 0, "spilled_levels": 0,
                                  "spill_reads": 0}


def _memory_line(ex: Any) -> list[str]:
    """One line on the memory budget, if the run had one."""
    got = getattr(ex, "spill", None)
    if not got:
        return []
    from osf_check.explorer.store.spill import human_bytes
    return [f"  memory budget {human_bytes(got['budget'])}: {human_bytes(got['spilled_bytes'])} "
            f"spilled to disk ({got['spilled_levels']} levels), "
            f"{human(got['spill_reads'])} reads back"]


def result_json(command: str, seed: int, bound: int | None, results: Sequence[ModelResult],
                traces: dict[int, list[dict[str, Any]]], exit_code: int) -> dict[str, Any]:
    models = []
    for k, r in enumerate(results):
        ex = r.exploration
        fired: dict[str, int] = {}
        for inst, n in zip(r.model.instances, ex.fired):
            fired[inst.name] = fired.get(inst.name, 0) + n
        models.append({
            "model": r.model.name,
            "params": r.model.params,
            "params_from_mutant": r.params_from_mutant,
            "assumptions": r.assumptions,
            "mutant": r.model.mutant,
            "verdict": r.verdict,
            "distinct_states": ex.distinct,
            "generated_states": ex.generated,
            "depth_reached": ex.depth_reached,
            "complete": ex.complete,
            "unexpanded_states": ex.unexpanded,
            "stopped": ex.stopped,
            "seconds": round(r.seconds, 3),
            "explore_seconds": round(ex.seconds, 3),  # the search alone (no graph checks)
            "states_per_second": round(ex.distinct / ex.seconds) if ex.seconds > 0 else None,
            "stored_bytes": int(ex.stored_bytes()),
            "symmetry": r.symmetry,
            "workers": r.workers,
            "memory": memory_json(ex),
            **({"por": r.por} if r.por else {}),
            "states_per_depth": ex.histogram(),
            "actions": fired,
            "properties": [_property_json(r, p) for p in r.properties],
            "extension_states": r.graph.extension_states if r.graph else 0,
            "warnings": r.warnings,
            "violations": [{"property": v.prop, "kind": v.kind, "message": v.message,
                            "length": len(v.path) - 1, "trace": t}
                           for v, t in zip(r.violations, traces.get(k, []))],
        })
    result = next((v for v, c in EXIT.items() if c == exit_code), "ok")
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "seed": seed,
        "bound": bound,
        "exit_code": exit_code,
        "result": result,
        "states": sum(m["distinct_states"] for m in models),
        "complete": all(m["complete"] for m in models),
        "violations": [v for m in models for v in m["violations"]],
        "models": models,
    }


def result_schema() -> dict[str, Any]:
    return json.loads(resources.files("osf_check").joinpath("schema/result.schema.json").read_text())


def human(n: float) -> str:
    return f"{n:,.0f}"


def _por_lines(r: ModelResult, depth: int | None) -> list[str]:
    """What a partial-order reduced run counted, and what its verdicts cover."""
    if not r.por:
        return []
    p = r.por
    lines = [f"  partial-order reduction: {human(p['reduced'])} states expanded by a stubborn "
             f"set, {human(p['full'])} in full ({human(p['proviso'])} of them by the cycle "
             "proviso); safety checks and deadlocks answer as on every state, counterexamples "
             "are replayed on the model and may be longer than the shortest"]
    if depth is not None:
        lines.append(f"  partial-order reduction with a depth bound: 'up to depth {depth}' "
                     "covers the reduced search's paths, not every path of that length "
                     "(--depth unbounded for a verdict on every state)")
    return lines


def explore_text(r: ModelResult, depth: int | None, seed: int) -> str:
    ex, m = r.exploration, r.model
    lines = []
    mut = f", mutant {m.mutant}" if m.mutant else ""
    lines.append(f"{m.name}{mut}: depth bound {depth if depth is not None else 'none'}, seed {seed}")
    ps = ", ".join(f"{k}={v}" + (" (from the mutant)" if k in r.params_from_mutant else "")
                   for k, v in m.params.items())
    lines.append(f"  parameters: {ps}")
    if r.assumptions:
        lines.append("  assumptions: " + ", ".join(
            f"{a} ({'in force' if on else 'DROPPED'})" for a, on in r.assumptions.items()))
    rate = ex.distinct / ex.seconds if ex.seconds > 0 else 0
    if ex.complete:
        comp = "complete (every reachable state explored)"
    elif ex.stopped == "violation":
        comp = "stopped at the first violation's depth"
    elif ex.stopped == "max-states":
        comp = f"INCOMPLETE: --max-states reached, {human(ex.unexpanded)} states unexpanded"
    elif ex.stopped == "state-ids":
        comp = (f"INCOMPLETE: the next level would have passed the vector engine's 32-bit state "
                f"ids, {human(ex.unexpanded)} states unexpanded")
    else:
        comp = f"bounded: {human(ex.unexpanded)} states at the bound left unexpanded"
    lines.append(f"  {human(ex.distinct)} distinct states, {human(ex.generated)} generated, depth "
                 f"{ex.depth_reached}, {comp}")
    before = f", {ex.seconds_before:.2f} s of it before --resume" if ex.seconds_before else ""
    lines.append(f"  {ex.seconds:.2f} s exploring ({human(rate)} distinct states/s{before}), "
                 f"{r.seconds:.2f} s in all" + (" here" if before else ""))
    lines.append(f"  states per depth: {' '.join(human(x) for x in ex.histogram())}")
    sym = r.symmetry
    if sym.get("used"):
        lines.append(f"  symmetry: one state per class of permuted "
                     f"{', '.join(map(str, sym['declared']))} (proved symmetric); counts are "
                     "of classes, counterexamples are the model's own steps")
    elif sym.get("why"):
        lines.append(f"  symmetry: not used ({sym['why']})")
    lines += _por_lines(r, depth)
    lines += _memory_line(ex)
    wk = r.workers
    if wk.get("partitions", 1) > 1:
        lines.append(f"  search partitioned over {wk['partitions']} workers, "
                     f"{human(int(wk['shuffled_bytes']))} bytes moved between them")
    elif wk.get("why"):
        lines.append(f"  workers: {wk['asked']} asked, one used ({wk['why']})")
    if r.graph and r.graph.extension_states:
        lines.append(f"  reach checks searched {human(r.graph.extension_states)} states past the "
                     f"bound to settle premise states whose future was cut")
    if r.graph and any(r.graph.undecided.values()):
        lines.append("  reach premise states on the bound, not judged (their future was not "
                     "computed): " + ", ".join(f"{k} {human(v)}"
                                               for k, v in r.graph.undecided.items() if v))
    width = max((len(p.title) for p in r.properties), default=0)
    lines.append("  properties:")
    for p in r.properties:
        st = r.status[p.id]
        if st == "holds":
            st = "holds" + ("" if ex.complete else f" up to depth {ex.depth_reached}")
        lines.append(f"    {p.title:<{width}}  {p.kinds:<16} {st}")
    fired: dict[str, int] = {}
    for inst, n in zip(m.instances, ex.fired):
        fired[inst.name] = fired.get(inst.name, 0) + n
    lines.append("  actions fired: " + ", ".join(f"{k} {human(v)}" for k, v in fired.items()))
    for w in r.warnings:
        lines.append(f"  warning: {w}")
    return "\n".join(lines) + "\n"


def summary_table(results: Sequence[ModelResult]) -> str:
    rows = [("model", "mutant", "distinct", "generated", "depth", "complete", "seconds", "states/s",
             "verdict")]
    for r in results:
        ex = r.exploration
        rows.append((r.model.name, r.model.mutant or "-", human(ex.distinct), human(ex.generated),
                     str(ex.depth_reached), "yes" if ex.complete else "no", f"{r.seconds:.2f}",
                     human(ex.distinct / ex.seconds if ex.seconds else 0), r.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows) + "\n"


def err(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def prove_traces(pr: Any) -> list[dict[str, Any]]:
    """Each property's entry of ``prove --json``: status, k, mined invariants, queries, and
    the trace of a refutation or a counterexample to induction."""
    from osf_check.explorer.prove import describe
    from osf_check.traces.format import make_trace
    m, docs = pr.model, []
    for r in pr.results:
        entry: dict[str, Any] = {"id": r.prop.id, "name": r.prop.name, "kind": r.prop.kinds,
                                 "status": r.status, "method": r.method, "k": r.k,
                                 "assumed": r.assumed,
                                 "mined": [describe(e, m) for e in r.mined],
                                 "lemmas": {"proved": r.lemmas[0], "given": r.lemmas[1],
                                            "held": [describe(e, m) for e in r.held]},
                                 "cti_reachable": r.cti_reachable, "note": r.note,
                                 "unchecked": r.unchecked,
                                 "queries": [{"what": q, "seconds": round(sec, 3)}
                                             for q, sec in r.queries]}
        for label, data in (("trace", r.trace), ("cti", r.cti)):
            if data is None:
                continue
            states, acts = data
            entry[label] = make_trace(
                m, states, [None] + list(acts),
                prop={"id": r.prop.id, "name": r.prop.name, "kind": label,
                      "reads": reads(m, r.prop, _first_kind(r.prop))},
                message=((r.note or "counterexample found by bounded model checking")
                         if label == "trace" else
                         "counterexample to induction: the property holds on the first states "
                         "and fails on the last; its first state may be unreachable"),
                seed=pr.seed, source="prove")
        docs.append(entry)
    return docs


def _strengthened_by(r: Any) -> str:
    """What a proof by induction assumed besides the property: the mined invariants and
    the user's own lemmas, counted apart."""
    parts = [f"{len(r.mined)} strengthening invariants" if r.mined else "",
             f"{len(r.held)} hand-written lemmas" if r.held else ""]
    said = " and ".join(p for p in parts if p)
    return f", with {said}" if said else ""


def prove_json(pr: Any) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "command": "prove", "model": pr.model.name,
            "params": pr.model.params, "mutant": pr.model.mutant, "seed": pr.seed, "k": pr.k,
            "sample_depth": pr.sample_depth, "exit_code": pr.exit_code,
            "seconds": round(pr.seconds, 3), "properties": prove_traces(pr)}


def prove_text(pr: Any, docs: Sequence[dict[str, Any]] | None = None) -> str:
    from osf_check.explorer.prove import describe
    m, k = pr.model, pr.k
    docs = prove_traces(pr) if docs is None else docs
    lines = [f"{m.name}{' mutant ' + m.mutant if m.mutant else ''}: BFS over every state to "
             f"depth {pr.sample_depth}, z3 BMC to depth {k} and k-induction k=1..{k}, seed "
             f"{pr.seed}"]
    for r, d in zip(pr.results, docs):
        line = f"  {r.prop.title:<36} {r.status}"
        if r.method == "every reachable state":
            line += f" ({r.note})"
        elif r.status in ("proved", "proved in part"):
            line += f" (k={r.k}" + (f", assuming {', '.join(r.assumed)}" if r.assumed else "") + \
                _strengthened_by(r) + ")"
        elif r.status == "refuted":
            line += f" at depth {r.k}"
        elif r.note:
            line += f" ({r.note})"
        if r.status == "proved in part":
            line += f"; {undecided(r.unchecked)}"
        lines.append(line)
        lines += [f"      {q['what']}: {q['seconds']:.2f} s" for q in d["queries"]]
        lines += [f"      hand-written lemma: {x}" for x in d["lemmas"]["held"]]
        if r.status == "refuted":
            lines.append(render.text(d["trace"]).rstrip("\n"))
        if r.status == "unknown" and "cti" in d:
            reach = {True: "reachable", False: "unreachable", None: "not found in the sampled "
                     "reachable states"}[r.cti_reachable]
            lines.append(f"      counterexample to induction ({reach}); last step: "
                         f"{d['cti']['steps'][-1]['label']}" + ("" if pr.mine else
                                                                " — try --mine"))
    mined = next((r.mined for r in pr.results if r.mined), None)
    if pr.mine and mined:
        lines.append(f"  mined strengthening invariants ({len(mined)}), for example:")
        lines += [f"      {describe(e, m)}" for e in mined[:5]]
    return "\n".join(lines) + "\n"


# the other commands' --json documents (each described in schema/result.schema.json) ---------
def timing_json(rep: Any, seed: int, code: int) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "command": "timing", "seed": seed,
            "exit_code": code, "deadlines": rep.deadlines, "classes": [
                {"name": c.name, "methods": c.methods, "desktop_last": c.desktop_last,
                 "phone": c.phone, "relay": c.relay, "lease": c.lease,
                 "B9": "holds" if c.b9 else "fails",
                 "B9_schedule": c.b9_schedule.as_dict() if c.b9_schedule else None,
                 "B10": "holds" if c.b10 else "fails",
                 "B10_schedule": c.b10_schedule.as_dict() if c.b10_schedule else None,
                 "phone_gives_up_first": c.gives_up_first,
                 "retry_meets": {k: v.as_dict() for k, v in c.retry_meets.items()}}
                for c in rep.classes]}


def fuzz_run_json(rep: Any, name: str, mutant: str | None, depth: int, elapsed: float,
                  t_tour: float, t_goals: float, params: dict[str, Any]) -> dict[str, Any]:
    """One system's part of ``fuzz --json``: the tour, the goals, the Hypothesis phase, the
    failure."""
    t_hyp = elapsed - t_tour - t_goals
    return {
        "model": name, "mutant": mutant, "exit_code": 12 if rep.failure else 0,
        "seconds": round(elapsed, 2),
        "tour": {"depth": depth, "steps": rep.steps, "seconds": round(t_tour, 2),
                 "states": [rep.states_covered, rep.states_total],
                 "transitions": [rep.edges_covered, rep.edges_total],
                 "taken_together": rep.edges_taken},
        "goals": {"seconds": round(t_goals, 2), "reached": sum(g.path is not None
                                                                for g in rep.goals),
                  "total": len(rep.goals), "each": [g.json() for g in rep.goals]},
        "hypothesis": {"examples": rep.hypothesis_examples, "steps": rep.hypothesis_steps,
                       "seconds": round(t_hyp, 2),
                       "examples_per_second": round(rep.hypothesis_examples / t_hyp, 1)
                       if t_hyp > 0 and rep.hypothesis_examples else None,
                       "distinct_model_states": len(rep.visited),
                       "map_depth": min(depth, 8), "map_states": rep.map_states,
                       "map_states_visited": rep.map_visited,
                       "states_beyond_map": len(rep.visited) - rep.map_visited,
                       "long_stories": rep.stories,
                       "long_stories_out_of_reach": rep.out_of_reach,
                       "seeds": list(rep.seeds), "failed_at_seed": rep.seed},
        "data_classes": sorted(rep.data_classes),
        "late_answers": sorted(rep.late_answers),
        "params": params,
        "failure": rep.failure}


def fuzz_json(runs: list[dict[str, Any]], seed: int, profile: str, db: str | None,
              code: int) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "command": "fuzz", "seed": seed,
            "profile": profile, "db": db, "exit_code": code, "runs": runs}


def check_log_json(res: Any, log: str, mapping: str, params: dict[str, Any],
                   code: int, warnings: Sequence[str] = ()) -> dict[str, Any]:
    """``check-log --json``: whether the log is explained, where not, and the throughput."""
    return {"schema_version": SCHEMA_VERSION, "command": "check-log", "exit_code": code,
            "model": res.model, "params": params, "log": log, "mapping": mapping,
            "explained": res.explained, "verdict": res.verdict, "lines": res.lines,
            "events": res.events,
            "ignored": res.ignored, "seconds": round(res.seconds, 3),
            "events_per_second": round(res.events_per_second),
            "hidden_depth": res.hidden_depth, "possible_at_end": res.possible,
            "peak_possible": res.peak_possible, "exercised": res.exercised,
            "unwitnessed": [{"property": k, "witness": v} for k, v in res.unwitnessed.items()],
            "failing": res.failing, "trace": res.trace, "warnings": list(warnings)}


def simulate_json(tables: list[Any], seed: int, runs: int, seconds: float) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "command": "simulate", "seed": seed,
            "runs": runs, "seconds": round(seconds, 3), "tables": tables}
