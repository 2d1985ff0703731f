"""check-log: trace validation of recorded logs against the model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osf_check.cli import main
from osf_check.fuzz.driver import model_for
from osf_check.tracelog.check import check_log
from osf_check.tracelog.mapping import MappingError, compile_mapping, read_document
from osf_check.tracelog.record import walk

EXAMPLES = Path(__file__).parent.parent / "examples"
MAPPING = EXAMPLES / "graph-relay.logmap.toml"


def _check(log: str, mutant: str | None = None, system: str = "graph-relay",
           mapping: str | None = None, **kw):
    m = model_for(system, mutant)
    doc = read_document(EXAMPLES / f"{mapping or system}.logmap.toml")
    return check_log(io.StringIO(log), m, compile_mapping(m, doc), **kw)


@pytest.fixture(scope="module")
def correct_logs() -> list[str]:
    m = model_for("graph-relay", None)
    return [walk(m, None, seed=s, steps=60).log for s in range(40)]


@pytest.mark.slow
def test_every_log_of_the_correct_implementation_is_explained(correct_logs):
    total = 0
    for log in correct_logs:
        res = _check(log)
        assert res.explained, res.failing
        total += res.events
    assert total > 1_800  # the lost requests and replies log nothing


def _broken(log: str, how: str, at: int) -> str:
    lines = log.splitlines(keepends=True)
    if how == "missing":
        del lines[at]
    elif how == "duplicated":
        lines.insert(at, lines[at])
    else:
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    return "".join(lines)


def test_a_log_with_an_event_missing_reordered_or_duplicated_is_refused_where_it_breaks():
    m = model_for("graph-relay", None)
    log = walk(m, None, seed=0, steps=60).log
    lines = log.splitlines()
    # the line where the Graph of run 0 starts: without it, or twice, or after its end,
    # no behaviour of the model explains what follows
    start = next(k for k, x in enumerate(lines) if '"desktop.graph_started"' in x)
    finish = next(k for k, x in enumerate(lines) if '"desktop.graph_finished"' in x)
    assert start < finish
    missing = _check(_broken(log, "missing", start))
    assert not missing.explained and missing.failing["line"] == finish  # 1-based: one less
    assert missing.failing["event"]["event"] == "desktop.graph_finished"
    twice = _check(_broken(log, "duplicated", start))
    assert not twice.explained and twice.failing["line"] == start + 2
    assert twice.failing["why"] == ["start_graph(r=0) is enabled in none of them"]
    lines2 = lines[:start] + [lines[finish]] + lines[start:finish] + lines[finish + 1:]
    swapped = _check("\n".join(lines2) + "\n")
    assert not swapped.explained and swapped.failing["line"] == start + 1
    # the explanation shows what the model still allowed just before the broken line
    assert missing.failing["possible_count"] >= 1 and missing.failing["possible_before"]


#: for each implementation mutant whose bug the log can show: the first seeded walk whose
#: log no behaviour explains, the event it is refused at, and the step that logged it
#: (regression pins from a run, re-pinned when the model's exchanges became lossy: the walks
#: changed; the step is never before the one where the fuzzer's checks saw the
#: implementation leave the model).  Regression pins, re-pinned: late_post and late_ack.
#: The walks take them (one-project-sync seed 6 -> 5, no-consent-recheck 1 -> 0), and the
#: server logs a late POST as any completion, so a server that mishandles one is refused
#: on it (status-only and complete-overwrites-cancel: seed 10, deliver_post(r=0) -> seed
#: 1, late_post(r=1))
REFUSED = {
    "fresh-key-on-retry": (9, "desktop.round_ended", "round_end"),
    "server-ignores-key": (9, "desktop.round_ended", "round_end"),
    "requeue-on-retry": (36, "tool.run_graph_session", "run_graph_session(i=0)"),
    "leaky-not-found": (0, "tool.get_graph_run", "get_graph_run(a=0, r=0)"),
    "queued-cancel-ignored": (1, "tool.cancel_graph_run", "cancel_graph_run(i=1, r=0)"),
    "one-project-sync": (5, "desktop.command_received", "sync"),
    "status-only": (1, "server.completion_received", "late_post(r=1)"),
    "queue-on-desktop": (109, "tool.get_graph_run", "get_graph_run(i=0, r=0)"),
    "complete-overwrites-cancel": (1, "server.completion_received", "late_post(r=1)"),
    "outbox-off": (0, "desktop.graph_finished", "graph_finish(r=0, o=completed)"),
    "outbox-drop-before-ack": (0, "desktop.graph_finished", "graph_finish(r=0, o=completed)"),
    "no-consent-recheck": (0, "desktop.graph_started", "start_graph(r=1)"),
    "recheck-ignores-slug": (8, "desktop.graph_started", "start_graph(r=0)"),
    "parallel-relay": (6, "desktop.graph_started", "start_graph(r=1)"),
    # bugs in what the completion POST carries: the A8 monitor judges the posted payload
    "truncate-by-bytes": (0, "desktop.graph_finished", "graph_finish(r=0, o=completed)"),
    "measure-code-points": (46, "desktop.graph_finished", "graph_finish(r=1, o=completed)"),
    "half-result": (46, "desktop.graph_finished", "graph_finish(r=1, o=completed)"),
}
BY_MONITOR = ("truncate-by-bytes", "measure-code-points", "half-result")


def test_the_table_names_every_implementation_mutant():
    from osf_check.fuzz.driver import IMPL_MUTANTS
    assert set(REFUSED) == set(IMPL_MUTANTS["graph-relay"])


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(REFUSED))
def test_each_mutants_log_is_refused_at_the_event_where_it_misbehaves(mutant):
    seed, event, label = REFUSED[mutant]
    m = model_for("graph-relay", mutant)
    for s in range(seed):  # the earlier walks are never refused: explained, or unknown
        w = walk(m, mutant, seed=s, steps=60)  # where the log goes past the model's bounds
        assert _check(w.log, mutant).verdict != "refused", s
    w = walk(m, mutant, seed=seed, steps=60)
    res = _check(w.log, mutant)
    assert res.verdict == "refused"
    k = w.step_of_line(res.failing["line"])
    assert (res.failing["event"]["event"], m.instances[w.path[k]].label) == (event, label)
    assert w.diverged is not None and k >= w.diverged


#: wire-relay: the walks start with the counterexample `explore --mutant` finds for the
#: model's twin of the mutant (random walks rarely reach these stories), then go on at random
#: (regression pins: which agent claims follows from the shortest counterexample, whose
#: parents are the least (action, parent) since issue 16)
WIRE_REFUSED = {
    "no-generation-check": (1, "relay.response_received", "drop_response(o=0, a=0)"),
    "pending-kept-after-final": (0, "phone.answer_received", "disconnect"),
    "disconnect-leaves-pending": (0, "phone.answer_received", "send(o=0)"),
    "drop-malformed": (0, "phone.request_sent", "send_malformed(o=0)"),
    # its log reads as a frame the network lost: unknown, never refused (see below)
    "limit-off-by-one": None,
    "memory-only-claims": (0, "desktop.claimed", "claim(o=0, a=0)"),
    "scope-key-without-method": (0, "phone.answer_received", "deliver(o=0, a=0)"),
    "rerun-after-lease": (0, "desktop.claimed", "claim(o=0, a=1)"),
    "fingerprint-ignores-params": (0, "desktop.claimed", "claim(o=0, a=0)"),
    "success-without-store": (12, "phone.answer_received", "deliver(o=0, a=0)"),
    "claim-without-slot": (0, "desktop.claimed", "claim(o=0, a=0)"),
    "retryable-replayed": (0, "desktop.claimed", "claim(o=0, a=1)"),
    "retry-mints-new-key": (0, "desktop.claimed", "claim(o=0, a=1)"),
    # the outbox workload, with its own mapping (which message is which operation's)
    "outbox-without-operation-ledger": (0, "app.outbox_message_enqueued",
                                        "dispatch_timeout(o=0, a=0, ran=1)"),
}
MAPPING_OF = {"outbox-without-operation-ledger": "wire-relay-outbox"}


def _story(mutant: str) -> list[str]:
    r = CliRunner().invoke(main, ["explore", "--mutant", mutant, "--json"])
    doc = json.loads(r.output[r.output.index("{"):])
    return [st["label"] for st in doc["violations"][0]["trace"]["steps"][1:]]


@pytest.mark.slow
def test_every_log_of_the_correct_wire_implementation_is_explained():
    m = model_for("wire-relay", None)
    events = 0
    for s in range(100):  # its runs are short: bounded generations and tries end them
        res = _check(walk(m, None, seed=s, steps=60).log, system="wire-relay")
        assert res.explained, (s, res.failing)
        events += res.events
    assert events > 800


def test_the_wire_table_names_every_implementation_mutant():
    from osf_check.fuzz.driver import IMPL_MUTANTS
    assert set(WIRE_REFUSED) == set(IMPL_MUTANTS["wire-relay"])


def test_a_mapping_that_extends_another_explains_its_workloads_correct_logs():
    doc = read_document(EXAMPLES / "wire-relay-outbox.logmap.toml")
    base = read_document(EXAMPLES / "wire-relay.logmap.toml")
    assert len(doc["event"]) == len(base["event"]) + 1 and doc["params"]["workload"] == 3
    assert "app.outbox_message_enqueued" not in doc["ignore"]
    params = dict(model_for("wire-relay", "outbox-without-operation-ledger").params)
    m = model_for("wire-relay", None, params)
    story = _story("outbox-without-operation-ledger")
    mp = compile_mapping(m, doc)
    enqueued = 0
    for s in range(30):
        log = walk(m, None, seed=s, steps=60, prefix=story).log
        enqueued += log.count("app.outbox_message_enqueued")
        assert check_log(io.StringIO(log), m, mp).explained, s
    assert enqueued > 0


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(m for m, row in WIRE_REFUSED.items() if row))
def test_each_wire_mutants_log_is_refused_at_the_event_where_it_misbehaves(mutant):
    m = model_for("wire-relay", mutant)
    story = _story(mutant)
    seed, event, label = WIRE_REFUSED[mutant]
    mapping = MAPPING_OF.get(mutant)
    for s in range(seed):  # the earlier walks are explained
        assert _check(walk(m, mutant, seed=s, steps=60, prefix=story).log, mutant,
                      "wire-relay", mapping).explained
    w = walk(m, mutant, seed=seed, steps=60, prefix=story)
    res = _check(w.log, mutant, "wire-relay", mapping)
    assert res.verdict == "refused"
    k = w.step_of_line(res.failing["line"])
    assert (res.failing["event"]["event"], m.instances[w.path[k]].label) == (event, label)
    assert w.diverged is not None and k >= w.diverged


def test_a_wire_mutants_log_a_lost_frame_explains_is_unknown_and_names_the_setting():
    """limit-off-by-one's request at the limit never reaches the desktop: on a network
    that loses frames (losses=1) the same log is a lost request, so a refusal at losses=0
    would be the model's setting, not the protocol's."""
    mutant = "limit-off-by-one"
    m = model_for("wire-relay", mutant)
    for seed in range(3):
        w = walk(m, mutant, seed=seed, steps=60, prefix=_story(mutant))
        res = _check(w.log, mutant, "wire-relay")
        assert w.diverged is not None and res.verdict == "unknown"
        assert res.failing["settings"]["explained_at"] == {"losses": 1}


@pytest.mark.parametrize("mutant", BY_MONITOR)
def test_payload_bugs_are_the_monitors_finding_not_the_models(mutant):
    """Without its [[monitor]] the mapping explains these logs: the model abstracts the
    payload away, and the monitor (the fuzzer's own A8 oracle) is what refuses them."""
    seed, _, _ = REFUSED[mutant]
    m = model_for("graph-relay", mutant)
    doc = read_document(MAPPING)
    assert doc.pop("monitor")
    log = walk(m, mutant, seed=seed, steps=60).log
    assert check_log(io.StringIO(log), m, compile_mapping(m, doc)).explained
    res = _check(log, mutant)
    assert not res.explained and res.failing["why"][0].startswith("property A8 violated")


def test_the_exercised_properties_depend_on_what_the_log_did():
    m = model_for("graph-relay", None)
    lines = walk(m, None, seed=1, steps=60).log.splitlines(keepends=True)
    short = _check("".join(lines[:2]))
    full = _check("".join(lines))
    assert short.explained and full.explained
    assert set(short.exercised) < set(full.exercised)
    assert "A7" in full.exercised and "A7" not in short.exercised


#: a lost POST that reaches the server while the desktop is offline: no re-send can have
#: carried it, so only the model's late_post explains the server's line
LATE_POST_OFFLINE = ["run_graph_session(i=0)", "answer_ticket(i=0)", "tick", "sync",
                     "start_graph(r=0)", "graph_finish(r=0, o=completed)", "lose_post(r=0)",
                     "go_offline", "late_post(r=0)"]


def _one_action_each(m):
    """The example mapping with each rule's first action only (as before a rule could
    name several)."""
    doc = read_document(MAPPING)
    for e in doc["event"]:
        if isinstance(e.get("action"), list):
            e["action"] = e["action"][0]
    return compile_mapping(m, doc)


def test_a_late_post_is_logged_as_any_completion_and_explained():
    """The server logs a POST the desktop had given up as any other (it cannot tell them
    apart), so the mapping names both actions for that line: the correct log is explained
    and shows A11 exercised.  Read as deliver_post alone, the same log is refused (the
    desktop was offline: no re-send), and without the line (late steps unlogged) A11 is not
    exercised: the log shows no completion received."""
    m = model_for("graph-relay", None)
    w = walk(m, None, seed=0, steps=len(LATE_POST_OFFLINE), prefix=LATE_POST_OFFLINE)
    assert [m.instances[a].label for a in w.path] == LATE_POST_OFFLINE and w.diverged is None
    last = json.loads(w.log.splitlines()[-1])
    assert last["event"] == "server.completion_received" and last["fields"]["run_status"] \
        == "completed"
    res = _check(w.log)
    assert res.explained and "A11" in res.exercised
    old = check_log(io.StringIO(w.log), m, _one_action_each(m))
    assert old.verdict == "refused" and old.failing["line"] == len(w.log.splitlines())
    assert old.failing["why"] == ["deliver_post(r=0) is enabled in none of them"]
    unlogged = "".join(w.log.splitlines(keepends=True)[:-1])
    res = _check(unlogged)
    assert res.explained and "A11" not in res.exercised


def test_a_late_2xx_is_logged_as_any_other():
    m = model_for("graph-relay", None)
    path = ["run_graph_session(i=0)", "answer_ticket(i=0)", "tick", "sync", "start_graph(r=0)",
            "graph_finish(r=0, o=completed)", "deliver_post(r=0)", "lose_ack(r=0)",
            "round_end", "late_ack(r=0)"]
    w = walk(m, None, seed=0, steps=len(path), prefix=path)
    assert [m.instances[a].label for a in w.path] == path and w.diverged is None
    last = json.loads(w.log.splitlines()[-1])
    assert (last["event"], last["fields"]["stored"]) == ("desktop.completion_acked", False)
    assert _check(w.log).explained


def test_a_property_whose_witness_the_log_never_shows_is_not_called_exercised(tmp_path):
    """A5 (single worker) was "exercised" by any log whose actions write the desktop's
    execution state, though with one command ever fetched no command can wait while
    another runs; the README's 200,000-line log (two start calls, no retry, one Graph)
    was said to exercise A1, A3, A4 and A5."""
    m = model_for("graph-relay", None)
    one = walk(m, None, seed=1, steps=60).log
    assert one.count("desktop.command_received") == 1
    res = _check(one)
    assert res.explained and "A5" not in res.exercised
    assert res.unwitnessed["A5"].startswith("a command waiting while another one executes")
    two = walk(m, None, seed=6, steps=120).log
    assert two.count("desktop.command_received") == 2
    res = _check(two)
    assert res.explained and "A5" in res.exercised and "A5" not in res.unwitnessed
    r = CliRunner().invoke(main, ["check-log", str(_write(tmp_path, one)), "--mapping",
                                  str(MAPPING), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    assert {"property": "A5", "witness": res_doc("A5")} in doc["unwitnessed"]


def res_doc(pid: str) -> str:
    from osf_check.properties import catalogue
    return next(p.witness_doc for p in catalogue.properties_of("graph-relay") if p.id == pid)


def test_hidden_steps_are_searched_only_to_the_depth_asked(tmp_path):
    m = model_for("graph-relay", None)
    log = walk(m, None, seed=1, steps=60).log
    assert _check(log, hidden_depth=4).explained
    # with no unlogged step allowed, a lost response or POST cannot be explained: and since
    # more unlogged steps might, the answer is unknown, never a refusal
    res = _check(log, hidden_depth=0)
    assert not res.explained and res.verdict == "unknown" and res.failing["bounded"]
    assert _check(log, hidden_depth=4).verdict == "explained"
    p = _write(tmp_path, log)
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING),
                                  "--hidden-depth", "0"])
    assert r.exit_code == 152 and "UNKNOWN: line" in r.output and "--hidden-depth" in r.output


# the model's bounds ------------------------------------------------------------------------

def _flaps(k: int) -> str:
    """A desktop that loses its connection and gets it back k times: no bug, however
    often, but the wire model counts reconnects up to gens-1."""
    return "".join(json.dumps({"time": t + 1.0, "station": "relay", "event": ev, "fields": {}})
                   + "\n" for t, ev in enumerate(["relay.desktop_disconnected",
                                                  "relay.desktop_connected"] * k))


def _runs(k: int) -> str:
    """Agent 0 starting k runs, one key each: the graph model has `intents` of them."""
    return "".join(json.dumps({
        "time": i + 1.0, "station": "server", "event": "tool.run_graph_session",
        "fields": {"agent": 0, "idempotency_key": f"intent-{i}-key", "attempt": 1,
                   "project_id": "proj_1", "command_id": f"run-{i}", "status": "queued"}})
        + "\n" for i in range(k))


def _at(system: str, log: str, **params):
    m = model_for(system, None, params)
    return check_log(io.StringIO(log), m, compile_mapping(
        m, read_document(EXAMPLES / f"{system}.logmap.toml")))


@pytest.mark.parametrize("system,log,raised,line", [
    ("wire-relay", _flaps(2), {"gens": 3}, 4),    # a second reconnect of a model with one
    ("graph-relay", _runs(3), {"intents": 3}, 3),  # a third run of a model with two
])
def test_a_log_that_outgrows_the_model_is_unknown_and_names_the_bounds_that_explain_it(
        system, log, raised, line):
    """It was "NOT EXPLAINED" (exit 12): a correct deployment's log blamed for the model's
    size."""
    res = _check(log, system=system)
    assert res.verdict == "unknown" and res.failing["line"] == line
    lim = res.failing["limits"]
    assert set(raised) <= set(lim["reached"]) and lim["largest"].items() >= raised.items()
    assert lim["verdict"].startswith("explained by the model at ")
    assert _at(system, log, **raised).explained


@pytest.mark.parametrize("system,log,params,words", [
    ("wire-relay", _flaps(3), {"gens": 3}, "the model at gens=2, switches=1 stops at line 4"),
    ("graph-relay", _runs(4), {"intents": 3}, "a value beyond the largest model"),
])
def test_a_log_beyond_the_largest_model_is_unknown_too(system, log, params, words):
    res = _at(system, log, **params)
    assert res.verdict == "unknown" and res.failing["limits"]["verdict"] == words


def test_a_refusal_at_a_reached_bound_stays_unknown_when_the_log_cannot_be_read_again():
    mutant = "drop-malformed"
    w = walk(model_for("wire-relay", mutant), mutant, seed=0, steps=60, prefix=_story(mutant))
    assert _check(w.log, mutant, "wire-relay").verdict == "refused"  # read again: settled
    m = model_for("wire-relay", mutant)
    once = (line for line in io.StringIO(w.log))  # a stream, read once
    res = check_log(once, m, compile_mapping(m, read_document(EXAMPLES /
                                                              "wire-relay.logmap.toml")))
    assert res.verdict == "unknown"
    assert res.failing["limits"]["verdict"] == "the log cannot be read again"


def test_a_parameter_wrongly_marked_as_a_bound_costs_a_verdict_never_makes_one(monkeypatch):
    """slugs is no bound: a rename goes round them (cur_slug + 1 mod slugs), so more slugs
    rename differently. Marked as a count, the larger model refuses an earlier line of a
    mutant's log, and the refusal it would have settled is unknown instead."""
    import dataclasses

    from osf_check.properties import catalogue
    spec = catalogue.spec("graph-relay")
    params = tuple(dataclasses.replace(p, bound="count") if p.name == "slugs" else p
                   for p in spec.params)
    mutant = "complete-overwrites-cancel"
    seed = 13  # regression pin: a refused walk of this mutant whose story renames a slug
    log = walk(model_for("graph-relay", mutant), mutant, seed=seed, steps=60).log
    assert _check(log, mutant).verdict == "refused"
    monkeypatch.setitem(catalogue.MODELS, "graph-relay",
                        dataclasses.replace(spec, params=params))
    res = _check(log, mutant)
    assert res.verdict == "unknown" and "slugs" in res.failing["limits"]["reached"]
    assert "stops at line" in res.failing["limits"]["verdict"]


@pytest.mark.parametrize("mutant,read", [
    # (a refusal where only a size, intents, is reached: no walk of the lossy model under
    # seed 60 gives one now; the count case below still reads the larger model first)
    ("complete-overwrites-cancel", [{"retries": 2}, {"retries": 1}]),  # a count: one fewer
])
def test_a_refusal_at_a_bound_is_compared_with_the_right_models(monkeypatch, mutant, read):
    """With only a size reached, the largest model was compared with itself (read twice,
    and "nothing added" by construction); it is compared with the model at hand."""
    from osf_check.tracelog import check as tl
    asked: list[dict] = []
    real = tl._read_again

    def spy(chk, res, mapping, reread, params):
        asked.append(params)
        return real(chk, res, mapping, reread, params)
    monkeypatch.setattr(tl, "_read_again", spy)
    seed = REFUSED[mutant][0]
    res = _check(walk(model_for("graph-relay", mutant), mutant, seed=seed, steps=60).log,
                 mutant)
    # then every other combination of the settings of few values (slugs, projects,
    # listing): 3 * 2 * 2 less the one at hand
    assert res.verdict == "refused" and asked[:len(read)] == read
    assert len(asked) == len(read) + 11 and all(set(a) == {"slugs", "projects", "listing"}
                                                for a in asked[len(read):])


def _count_convention_breaks(system: str, param: str, depth: int = 6) -> tuple[int, int]:
    """States within ``depth`` steps of the start where the model with ``param`` one
    higher does not keep a step of this one (same successor), or adds one while no
    counter ``param`` sizes is at its top; and the states looked at."""
    from osf_check.explorer.compiled.pycompile import compile_steps
    from osf_check.tracelog.bounds import bounds_of
    m = model_for(system, None)
    b = bounds_of(m)
    big = b.build(m, {param: m.params[param] + 1})
    assert big.slot_names == m.slot_names  # the counts below change no array's length
    tops = [(slot, top) for slot, top, q in b.tops if q == param] or \
        [(i, d.hi) for i, (d, e) in enumerate(zip(m.slot_domains, big.slot_domains))
         if d.hi != e.hi]  # a parameter not marked: the slots it sizes
    small_steps, big_steps = compile_steps(m), compile_steps(big)
    of_label = {inst.label: k for k, inst in enumerate(m.instances)}
    seen = set(m.initial_states)
    frontier, breaks = list(seen), 0
    for _ in range(depth):
        nxt = []
        for s in frontier:
            at_top = any(s[slot] == top for slot, top in tops)
            for j, inst in enumerate(big.instances):
                k = of_label.get(inst.label)
                u = small_steps[k](s) if k is not None else None
                w = big_steps[j](s)
                breaks += (u is not None and u != w) or (u is None and w is not None
                                                          and not at_top)
                if u is not None and u not in seen:
                    seen.add(u)
                    nxt.append(u)
        frontier = nxt
    return breaks, len(seen)


@pytest.mark.parametrize("system,param", [("wire-relay", "gens"), ("wire-relay", "restarts"),
                                          ("wire-relay", "switches"),
                                          ("graph-relay", "retries")])
def test_a_count_keeps_every_step_and_adds_steps_only_at_its_top(system, param):
    """The cut-off the judging of a refusal rests on, checked on the shipped counts."""
    breaks, states = _count_convention_breaks(system, param)
    assert breaks == 0 and states > 1_000


def test_the_convention_check_catches_a_parameter_that_is_no_count():
    """graph-relay's slugs: a rename at the last slug goes back to the first, where one
    slug more renames to it; the check above fails on it."""
    breaks, _ = _count_convention_breaks("graph-relay", "slugs")
    assert breaks > 0


@pytest.mark.slow
@pytest.mark.parametrize("system", ["graph-relay", "wire-relay"])
def test_the_largest_bounds_explain_every_log_of_the_correct_implementation(system):
    """What the judging of a refusal relies on: a larger bound only adds behaviours (and
    the mappings read the model at any bound: stage[o*(retries+1)+a])."""
    from osf_check.tracelog.bounds import bounds_of
    m = model_for(system, None)
    largest = {p: hi for p, (v, hi) in bounds_of(m).values.items()}
    assert largest and all(largest[p] > v for p, (v, _) in bounds_of(m).values.items()
                           if p not in ("ops",))
    events = 0
    for s in range(20):
        log = walk(m, None, seed=s, steps=60).log
        res = _at(system, log, **largest)
        assert res.explained, (s, res.failing)
        events += res.events
    assert events > 150


def test_the_mapping_index_may_name_a_parameter():
    """An index o*F+a of a flat array (a two-dimensional array written by hand) reads F
    from the model's parameters, so that one mapping fits every bound."""
    m = model_for("wire-relay", None, {"retries": 2})
    doc = read_document(EXAMPLES / "wire-relay.logmap.toml")
    for key, factor in (("pend[o*(retries+1)+a]", ("o", 3, "a")), ("pend[o*2+a]", ("o", 2, "a"))):
        doc["event"] = [dict(e, state={key: "x"}) if e["name"] == "desktop.claimed" else e
                        for e in doc["event"]]
        assert compile_mapping(m, doc).rules["desktop.claimed"][0].state[0][1] == factor
    doc["event"] = [dict(e, state={"pend[o*(nosuch+1)+a]": "x"})
                    if e["name"] == "desktop.claimed" else e for e in doc["event"]]
    with pytest.raises(MappingError, match="nosuch"):
        compile_mapping(m, doc)


def test_the_shipped_wire_mapping_names_a_copy_by_its_two_indices():
    m = model_for("wire-relay", None, {"retries": 2})
    rule = compile_mapping(m, read_document(EXAMPLES / "wire-relay.logmap.toml")
                           ).rules["desktop.claimed"][0]
    (var, element, _), = rule.state
    assert var == "stage" and element.text == "[o][a]"
    ops = len(m.constants["ctx"].ops)
    assert [(i, n, stride) for i, _, n, stride in element.steps] == [("o", ops, 3), ("a", 3, 1)]


def test_cli_a_log_past_the_models_bounds_exits_152_with_the_parameters(tmp_path):
    p = _write(tmp_path, _flaps(2))
    wire = str(EXAMPLES / "wire-relay.logmap.toml")
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", wire, "--json"])
    assert r.exit_code == 152, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    assert doc["verdict"] == "unknown" and doc["failing"]["limits"]["reached"]["gens"] == 2
    from jsonschema import Draft202012Validator
    Draft202012Validator(json.loads((Path(__file__).parent.parent / "osf_check" / "schema" /
                                     "result.schema.json").read_text())).validate(doc)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", wire, "--out", str(out)])
    assert "UNKNOWN: line 4 is the first event" in r.output
    assert "bounds: explained by the model at gens=3" in r.output
    html = (out / "report.html").read_text()
    assert "<td>unknown</td>" in html and "bounds: explained by the model at gens=3" in html
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", wire, "--param", "gens=3"])
    assert r.exit_code == 0, r.output


# the command line -------------------------------------------------------------------------

DIEHARD_MAP = """model = "diehard"
[[event]]
name = "tap.opened"
action = "FillBig"
[[event]]
name = "poured"
action = "BigToSmall"
state = { small = "small", big = "big" }
"""


def _jugs(small: int, big: int) -> str:
    return (json.dumps({"time": 1, "station": "tap", "event": "tap.opened", "fields": {}})
            + "\n" + json.dumps({"time": 2, "station": "jugs", "event": "poured",
                                 "fields": {"small": small, "big": big}}) + "\n")


@pytest.mark.parametrize("small,big,code", [(3, 2, 0), (1, 4, 12)])
def test_cli_checks_a_log_against_a_model_of_the_users_own_file(tmp_path, small, big, code):
    """check-log took no --model-file: a mapping for a model written outside osf-check
    was "unknown model"."""
    mapping = tmp_path / "jugs.logmap.toml"
    mapping.write_text(DIEHARD_MAP)
    log = _write(tmp_path, _jugs(small, big))
    # the jugs' other moves are unlogged: searched to the end, they cannot pour 1 and 4
    args = ["check-log", str(log), "--mapping", str(mapping), "--hidden-depth", "16"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 150 and "--model-file PATH" in r.output
    args += ["--model-file", str(EXAMPLES / "diehard.py")]
    if code == 12:  # a refusal is a verdict only at the deployment's settings, stated
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 152 and "settings were not stated" in r.output, r.output
        args += ["--param", "goal=4"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == code, r.output
    assert ("explained: a behaviour of diehard" if code == 0 else
            "NOT EXPLAINED: line 2") in r.output


# the command line -------------------------------------------------------------------------

def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "events.jsonl"
    p.write_text(text)
    return p


def test_cli_explains_a_log_and_reports_throughput_and_properties(tmp_path, correct_logs):
    p = _write(tmp_path, correct_logs[0])
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    assert doc["explained"] and doc["events"] == len(correct_logs[0].splitlines())
    assert doc["events_per_second"] > 0 and doc["exercised"] and doc["failing"] is None
    assert doc["warnings"] == []
    from jsonschema import Draft202012Validator
    schema = json.loads((Path(__file__).parent.parent / "osf_check" / "schema" /
                         "result.schema.json").read_text())
    Draft202012Validator(schema).validate(doc)


def test_cli_refuses_a_log_with_the_line_its_reasons_and_a_picture(tmp_path):
    m = model_for("graph-relay", "outbox-off")
    w = walk(m, "outbox-off", seed=0, steps=60)
    p = _write(tmp_path, w.log)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING),
                                  "--out", str(out)])
    assert r.exit_code == 12, r.output
    assert "NOT EXPLAINED: line 10 is the first event" in r.output
    assert "graph_finish(r=0, o=completed) leaves outbox[0] = true where the log says false" \
        in r.output
    tr = json.loads((out / "graph-relay-log.trace.json").read_text())
    assert tr["source"] == "check-log" and tr["steps"][-1]["label"] == \
        "graph_finish(r=0, o=completed)"
    assert (out / "graph-relay-log.sequence.svg").exists()
    html = (out / "report.html").read_text()
    assert "first unexplained line" in html and "leaves outbox[0] = true" in html


def test_cli_a_line_the_model_cannot_take_at_all_is_red_after_the_last_explained_step(
        tmp_path):
    """Where the model has no version of the failing line (a reconnect past the model's
    generations), the trace ends on the step that explains line 3; the text called that
    step "the model's own reading of line 4" and the picture said "fails here" of it, and
    "1 model states were possible"."""
    p = _write(tmp_path, _flaps(2))
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping",
                                  str(EXAMPLES / "wire-relay.logmap.toml"), "--out", str(out)])
    assert r.exit_code == 152, r.output
    assert "reconnect is enabled in none of them" in r.output
    assert "1 model state was possible just before it" in r.output
    assert "(3 steps, which explain the lines before it; the model has no version of " \
        "line 4 after them)" in r.output and "own version" not in r.output
    tr = json.loads((out / "wire-relay-log.trace.json").read_text())
    assert tr["property"]["line"] == 4 and tr["property"]["read"] is False
    assert [s["label"] for s in tr["steps"][1:]] == ["disconnect", "reconnect", "disconnect"]
    text = (out / "wire-relay-log.txt").read_text()
    assert "× line 4 (relay.desktop_connected) cannot follow this step" in text
    assert "fails here" not in text


def test_cli_the_models_own_version_of_the_failing_line_is_the_red_step(tmp_path):
    m = model_for("graph-relay", "outbox-off")
    p = _write(tmp_path, walk(m, "outbox-off", seed=0, steps=60).log)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING),
                                  "--out", str(out)])
    assert r.exit_code == 12, r.output
    assert "the last the model's own version of line 10)" in r.output
    tr = json.loads((out / "graph-relay-log.trace.json").read_text())
    assert tr["property"]["line"] == 10 and tr["property"]["read"] is True
    text = (out / "graph-relay-log.txt").read_text()
    assert "× line 10 (desktop.graph_finished): the model's version of it, where the log parts " \
        "from the model" in text


@pytest.mark.parametrize("how", ["pipe", "stdin"])
def test_cli_a_log_from_a_pipe_or_stdin_is_read_and_pictured_as_a_file(tmp_path, how):
    """``check-log <(kubectl logs ...)`` was "no log file /dev/fd/63", and a log on stdin
    (``-``) got no failure trace (the trace reads the log twice); a byte-order mark
    at its start, as Windows' editors write, was "not JSON"."""
    import os
    import subprocess
    import sys
    import threading
    m = model_for("graph-relay", "outbox-off")
    data = ("\ufeff" + walk(m, "outbox-off", seed=0, steps=60).log).encode("utf-8")
    out = tmp_path / "out"
    args = ["check-log", "-", "--mapping", str(MAPPING), "--out", str(out)]
    if how == "stdin":
        p = subprocess.run([sys.executable, "-m", "osf_check.cli", *args], input=data,
                           capture_output=True, timeout=300)
        code, text = p.returncode, p.stdout.decode()
    else:
        fifo = tmp_path / "log"
        os.mkfifo(fifo)

        def feed() -> None:
            with open(fifo, "wb") as f:
                f.write(data)
        threading.Thread(target=feed, daemon=True).start()
        args[1] = str(fifo)
        r = CliRunner().invoke(main, args)
        code, text = r.exit_code, r.output
    assert code == 12, text
    assert "NOT EXPLAINED: line 10 is the first event" in text
    tr = json.loads((out / "graph-relay-log.trace.json").read_text())
    assert tr["steps"][-1]["label"] == "graph_finish(r=0, o=completed)"


def test_cli_a_live_log_is_refused_at_its_line_before_it_ends(tmp_path):
    """``kubectl logs -f relay | osf-check check-log -``: the unexplained line is
    reported as it arrives, the stream still open (the log is copied as it is read,
    not first)."""
    import subprocess
    import sys
    m = model_for("graph-relay", "outbox-off")
    data = walk(m, "outbox-off", seed=0, steps=60).log.encode("utf-8")
    p = subprocess.Popen([sys.executable, "-m", "osf_check.cli", "check-log", "-",
                          "--mapping", str(MAPPING)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdin is not None
        p.stdin.write(data)
        p.stdin.flush()  # and left open: more of the log may come
        assert p.wait(timeout=120) == 12
        assert p.stdout is not None and b"NOT EXPLAINED: line 10" in p.stdout.read()
    finally:
        p.kill()
        p.communicate()


@pytest.mark.parametrize("ignore", [False, True])
def test_cli_a_log_with_nothing_to_check_is_explained_with_a_warning(tmp_path, ignore):
    """An empty log, or one whose every event the mapping ignores, is explained (the
    empty behaviour explains it) and says that nothing was checked: a wrong file
    passes no other way unnoticed."""
    mp = MAPPING
    text = ""
    if ignore:
        mp = tmp_path / "map.toml"
        mp.write_text(f"extends = {str(MAPPING)!r}\nignore = ['desktop.heartbeat']\n")
        text = '{"time": 0, "station": "desktop", "event": "desktop.heartbeat", ' \
               '"fields": {}}\n'
    p = _write(tmp_path, text)
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(mp), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    assert doc["explained"] and doc["events"] == 0 and doc["ignored"] == int(ignore)
    assert len(doc["warnings"]) == 1 and "nothing was checked" in doc["warnings"][0]
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(mp)])
    assert "warning: the log holds no event the mapping reads" in r.stdout, r.output


@pytest.mark.parametrize("text,words", [
    ('{"event": "tick"\n', "line 1: not JSON"),
    ('[1, 2]\n', "line 1: an event is an object"),
    ('{"time": 0, "event": "desktop.nothing", "fields": {}}\n',
     "line 1: event 'desktop.nothing' is not in the mapping"),
    ('{"time": "noon", "event": "desktop.round_started", "fields": {}}\n',
     'line 1: "time" must be a number'),
    ('{"time": 1, "event": "desktop.graph_started", "fields": {}}\n',
     "line 1: event 'desktop.graph_started' has no field 'command_id'"),
    ('{"time": 1, "event": "desktop.connectivity", "fields": {"online": 3}}\n',
     "line 1: no rule for 'desktop.connectivity' matches its fields"),
])
def test_cli_malformed_lines_are_bad_input_naming_the_line(tmp_path, text, words):
    good = '{"time": 0, "station": "desktop", "event": "desktop.round_started", "fields": {}}\n'
    p = _write(tmp_path, text)
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING)])
    assert r.exit_code == 150 and words in r.output, r.output
    assert "Traceback" not in r.output
    p = _write(tmp_path, good + text)  # the line number counts from the file's start
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING)])
    assert r.exit_code == 150 and words.replace("line 1", "line 2") in r.output, r.output


@pytest.mark.parametrize("mapping,words", [
    ("model = 'graph-relay'\n", "no [[event]] rule"),
    ("model = 'wire-relay'\n[[event]]\nname='x'\naction='tick'\n", "is for 'wire-relay'"),
    ("[[event]]\nname='x'\naction='fly'\n", "has no action 'fly'"),
    ("[[event]]\nname='x'\naction=['tick', 'fly']\n", "has no action 'fly'"),
    ("[[event]]\nname='x'\naction=[]\n", "action must be a string or a non-empty list"),
    ("[[event]]\nname='x'\naction=3\n", "action must be a string or a non-empty list"),
    ("[[event]]\nname='x'\naction='tick'\nargs={r='id'}\n", "tick has no argument 'r'"),
    ("[[event]]\nname='x'\naction='sync'\nstate={colour='c'}\n", "no variable of graph-relay"),
    ("[[event]]\nname='x'\naction='sync'\nstate={status='c'}\n", "status is an array"),
    ("[[event]]\nname='x'\nstate={}\n", "an observation"),
    ("[[event]]\nname='x'\naction='tick'\n[[monitor]]\nevent='x'\nproperty='A9'\n",
     "no monitor for property 'A9'"),
    ("[[event]]\nname='x'\naction='tick'\n[[monitor]]\nevent='x'\nproperty='A8'\n"
     "fields={posted='p'}\n", "A8 reads the fields posted, result"),
    ("extends = 'nowhere.toml'\n", "cannot read the mapping"),
    ("model = [\n", "not valid TOML"),
    (b"\xff\xfemodel", "is not UTF-8 text"),  # was an internal error
    # a monitor that is not a list of tables, a property that is not a name: internal
    # errors (TypeError) before
    ("monitor = 0\n[[event]]\nname='x'\naction='tick'\n",
     "monitor must be a list of [[monitor]] tables"),
    ("[[event]]\nname='x'\naction='tick'\n[[monitor]]\nevent='x'\nproperty=[1]\n",
     "no monitor for property [1]"),
    # internal errors (AttributeError, TypeError, RecursionError) before
    ("params = 3\n[[event]]\nname='x'\naction='tick'\n", "params must be a table"),
    (f"extends = '{MAPPING}'\nparams = 3\n", "params must be a table"),
    (f"extends = '{EXAMPLES / 'wire-relay.logmap.toml'}'\n[[event]]\nname=['a']\n"
     "action='tick'\n", "the mapping is for 'wire-relay'"),  # (its ignore met a list)
    ("extends = 'map.toml'\n", "extends comes back to itself"),
    ("extends = 'base.toml'\n", "base.toml: ignore must be a list of event names"),
])
def test_cli_a_wrong_mapping_is_bad_input(tmp_path, mapping, words):
    mp = tmp_path / "map.toml"
    (tmp_path / "base.toml").write_text(f"extends = '{MAPPING}'\nignore = [[1]]\n")
    if isinstance(mapping, bytes):
        mp.write_bytes(mapping)
    else:
        mp.write_text(mapping)
    p = _write(tmp_path, "")
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(mp), "--model",
                                  "graph-relay"])
    assert r.exit_code == 150 and words in r.output, r.output


@pytest.mark.parametrize("value", [{"a": 1}, [1]])
def test_a_field_holding_an_object_or_a_list_is_a_value_the_model_does_not_take(tmp_path,
                                                                                 value):
    """It was an internal error (the memo of a line's meaning hashed the value); it is
    judged as a wrong string is, the model's reading of it said."""
    line = {"time": 1, "station": "desktop", "event": "desktop.project_toggled",
            "fields": {"project_id": "proj_1", "enabled": value}}
    p = _write(tmp_path, json.dumps(line) + "\n")
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING)])
    assert r.exit_code == 12, r.output
    assert f"enabled: expected true/false, got {value!r}" in r.stdout


def test_mapping_errors_are_bad_values():
    m = model_for("graph-relay", None)
    with pytest.raises(MappingError, match="unknown key"):
        compile_mapping(m, {"event": [{"name": "x", "action": "tick", "colour": 1}]})


def _record(*args: str, stdout=None):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "osf_check.tracelog.record", *args],
                          stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("args, needle", [
    (["--steps", "0"], "--steps must be at least 1"),
    (["--seed", "-1"], "'-1' is not a seed from 0 to 4294967295"),
    (["--seed", "4294967296"], "is not a seed from 0"),
    (["--mutant", "nosuch"], "graph-relay has no mutant 'nosuch'"),
])
@pytest.mark.slow
def test_the_recorder_takes_bad_input_as_the_command_line_does(args, needle):
    """argparse printed its usage and exited 2; a negative seed was taken."""
    r = _record(*args)
    assert r.returncode == 150 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_the_recorder_on_a_full_disk_says_so_in_a_line():
    """It was a traceback."""
    with open("/dev/full", "w") as full:  # a device: written to, never replaced
        r = _record("--steps", "50", stdout=full)
    assert r.returncode == 152 and "No space left on device" in r.stderr
    assert "Traceback" not in r.stderr


# anything a user may write --------------------------------------------------------------

_LEAF = st.one_of(st.integers(-3, 5), st.booleans(), st.none(), st.text("ai*:[]r0 ", max_size=6),
                  st.sampled_from(["*", "run:command_id", "attempt", "status", "i", "r",
                                   "o*2+a", "o*(retries+1)+a", "o*(nosuch)+a"]))
_VALUE = st.recursive(_LEAF, lambda c: st.one_of(
    st.lists(c, max_size=3),
    st.dictionaries(st.sampled_from(["field", "map", "else", "x"]), c, max_size=3)),
    max_leaves=6)
_KEYS = st.sampled_from(["i", "r", "a", "o", "attempts[i]", "status[r]", "status", "cur_slug",
                         "outbox[0]", "read", "answer", "x[", "proj[run:command_id]",
                         "stage[o*2+a]"])
_RULE = st.fixed_dictionaries({"name": st.sampled_from(["e1", "e2"])}, optional={
    "action": st.one_of(st.sampled_from(["run_graph_session", "get_graph_run", "tick",
                                         "graph_finish", "claim", "nosuch"]), _VALUE),
    "when": st.one_of(st.dictionaries(st.sampled_from(["agent", "k"]), _VALUE, max_size=2),
                      _VALUE),
    **{k: st.one_of(st.dictionaries(_KEYS, _VALUE, max_size=3), _VALUE)
       for k in ("args", "state", "outputs")}})
_DOC = st.fixed_dictionaries({"event": st.one_of(st.lists(_RULE, min_size=1, max_size=3),
                                                 _VALUE)},
                             optional={k: st.one_of(_LEAF, _VALUE) for k in (
                                 "ignore", "params", "monitor", "model")})
_LINES = st.lists(st.tuples(st.sampled_from(["e1", "e2", "e3"]), st.dictionaries(
    st.sampled_from(["agent", "k", "attempt", "status", "command_id", "result"]), _LEAF,
    max_size=5)), max_size=5)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
@given(st.sampled_from(["graph-relay", "wire-relay"]), _DOC, _LINES)
def test_any_mapping_and_log_is_checked_or_bad_input_never_an_internal_error(system, doc,
                                                                             lines):
    """A Hypothesis run of random mappings and logs found `params = None` a TypeError."""
    from osf_check.models.errors import BadValue
    m = model_for(system, None)
    try:
        mp = compile_mapping(m, doc)
    except BadValue:
        return
    log = "".join(json.dumps({"time": 1, "station": "s", "event": e, "fields": f}) + "\n"
                  for e, f in lines)
    try:
        res = check_log(io.StringIO(log), m, mp)
    except BadValue:
        return
    assert res.verdict in ("explained", "refused", "unknown")


def test_the_checker_checks_a_log_given_as_lines_or_a_file(tmp_path):
    from osf_check import BadValue, Checker
    mutant = "outbox-off"
    log = walk(model_for("graph-relay", mutant), mutant, seed=0, steps=60).log
    res = Checker("graph-relay").check_log(log.splitlines(keepends=True), MAPPING)
    assert res.verdict == "refused" and res.failing["line"] == 10
    p = _write(tmp_path, _flaps(2))
    wire = read_document(EXAMPLES / "wire-relay.logmap.toml")
    assert Checker("wire-relay").check_log(p, wire).verdict == "unknown"
    assert Checker("wire-relay").params(gens=3).check_log(str(p), wire).verdict == "explained"
    for bad, words in [((tmp_path / "none.jsonl", MAPPING), "cannot read the log"),
                       ((p, 3), "mapping is a mapping file or its document"),
                       ((42, MAPPING), "log is a file or a sequence of lines")]:
        with pytest.raises(BadValue, match=words):
            Checker("graph-relay").check_log(*bad)
    with pytest.raises(BadValue, match="hidden_depth"):
        Checker("graph-relay").check_log(p, MAPPING, hidden_depth=-1)


def test_cli_warns_of_lines_out_of_time_order(tmp_path, correct_logs):
    """A log merged from several stations but not sorted reads in the wrong order: a
    refusal then says so, rather than only blaming the implementation."""
    lines = correct_logs[1].splitlines(keepends=True)
    k = next(i for i in range(len(lines) - 1)
             if json.loads(lines[i])["time"] < json.loads(lines[i + 1])["time"])
    p = _write(tmp_path, _broken("".join(lines), "moved", k))
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING), "--json"])
    doc = json.loads(r.output[r.output.index("{"):])
    assert any(f"(the first: line {k + 2})" in w for w in doc["warnings"]), doc["warnings"]
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING)])
    assert "have a time earlier than the line before them" in r.output
    p = _write(tmp_path, correct_logs[1])
    r = CliRunner().invoke(main, ["check-log", str(p), "--mapping", str(MAPPING), "--json"])
    assert json.loads(r.output[r.output.index("{"):])["warnings"] == []


def test_a_bound_the_users_model_cannot_be_built_at_is_a_model_error(tmp_path):
    src = (EXAMPLES / "diehard.py").read_text()
    src = src.replace('Param("goal", 4, 0, BIG, "gallons to measure")',
                      'Param("goal", 4, 0, BIG, "gallons to measure", bound="count")')
    src = src.replace("def build(params, mutant):\n",
                      "def build(params, mutant):\n    if params['goal'] == 5:\n"
                      "        raise ValueError('no five')\n")
    f = tmp_path / "jugs.py"
    f.write_text(src)
    mapping = tmp_path / "jugs.logmap.toml"
    mapping.write_text(DIEHARD_MAP)
    log = _write(tmp_path, _jugs(3, 2))
    r = CliRunner().invoke(main, ["check-log", str(log), "--mapping", str(mapping),
                                  "--model-file", str(f)])
    assert r.exit_code == 150, r.output
    assert "goal is marked as a bound, but diehard cannot be built with goal=5" in r.output
