"""Fuzzing the wire implementation against the wire-relay model."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from osf_check.fuzz.driver import TOUR_DEPTH, hypothesis_run, tour
from osf_check.fuzz.wire_harness import IMPL_MUTANTS
from fuzzcheck import assert_reproduces, run_then_kill
from osf_check.cli import main
from osf_check.relay.wire.idempotency import DurableClaims, Scope


def test_every_walk_counts_the_initial_state_as_visited():
    """The walks' visited states left out the state each walk begins in: with a map of
    depth 0 (the initial state alone) the fuzzer said it visited 0 of its 1 state."""
    rep = hypothesis_run("wire-relay", examples=3, steps=4, start_depth=0, profile="ci")
    assert rep.failure is None and (rep.map_states, rep.map_visited) == (1, 1)


def test_a_walk_from_an_initial_state_not_the_models_is_a_divergence():
    from osf_check.fuzz.driver import make_harness

    def shifted(*args, **kw):
        h = make_harness(*args, **kw)
        real = h.abstract
        h.abstract = lambda: (real()[0] + 1,) + real()[1:]
        return h
    rep = hypothesis_run("wire-relay", examples=2, steps=4, start_depth=0, profile="ci",
                         harness=shifted)
    assert rep.failure == "the implementation's initial state is not the model's"


@pytest.mark.slow
def test_the_tour_covers_every_state_and_transition_within_depth_8():
    rep = tour("wire-relay", depth=8)
    assert rep.failure is None, rep.failure
    # regression pins: the explorer's graph to this depth (covered = observed, see
    # test_tour_coverage_drops_when_the_harness_skips_transitions)
    assert (rep.states_covered, rep.states_total) == (20_244, 20_244)
    assert (rep.edges_covered, rep.edges_total) == (41_805, 41_805)


def test_hypothesis_finds_nothing_on_the_correct_implementation():
    rep = hypothesis_run("wire-relay", examples=60, steps=40, profile="ci")
    assert rep.failure is None, rep.failure
    assert rep.hypothesis_examples >= 60 and len(rep.visited) > 50


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(IMPL_MUTANTS))
def test_the_fuzzer_catches_each_implementation_mutant(mutant):
    rep = tour("wire-relay", mutant=mutant, depth=TOUR_DEPTH["wire-relay"])
    assert rep.failure is not None
    assert 1 <= len(rep.path) <= TOUR_DEPTH["wire-relay"]
    assert_reproduces(rep)


def test_a_property_names_the_bug():
    rep = tour("wire-relay", mutant="disconnect-leaves-pending", depth=4)
    assert rep.failure == "property B6 violated by the implementation on disconnect"
    rep = tour("wire-relay", mutant="success-without-store", depth=4)
    assert "property B7 violated" in rep.failure


def test_fuzz_cli_trace_renders_and_replays_on_the_mutant_only(tmp_path):
    res = CliRunner().invoke(main, ["fuzz", "--mutant", "disconnect-leaves-pending", "--out",
                                    str(tmp_path), "--json"])
    assert res.exit_code == 12, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["model"] == "wire-relay" and "B6" in run["failure"]
    tr = tmp_path / "wire-relay-disconnect-leaves-pending-fuzz.trace.json"
    assert CliRunner().invoke(main, ["render", str(tr), "--format", "mermaid"]).exit_code == 0
    bad = CliRunner().invoke(main, ["replay", str(tr)])
    assert bad.exit_code == 12 and "property B6 violated" in bad.stdout
    ok = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert ok.exit_code == 0 and "followed all 2 steps" in ok.stdout


@pytest.mark.slow
def test_a_failure_at_other_parameters_is_traced_at_those_parameters(tmp_path):
    """fuzz --param drove the implementation at the given parameters but drew its trace on
    the model at the defaults: the failing path's steps were read as other actions (at
    retries=2 the trace showed two steps at retries=1, without the failing one) and the
    trace did not replay."""
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--mutant",
                                    "pending-kept-after-final", "--param", "retries=2",
                                    "--examples", "0", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 12, res.output
    [run] = json.loads(res.stdout)["runs"]
    tr = run["trace"]
    assert tr["params"]["retries"] == 2
    # the divergent delivery, then the expiry driven from the implementation's state to
    # show the property it breaks (B5)
    assert [s["label"] for s in tr["steps"][-2:]] == ["deliver(o=0, a=0)", "expire(o=0)"], \
        [s["label"] for s in tr["steps"]]
    path = tmp_path / "wire-relay-pending-kept-after-final-fuzz.trace.json"
    bad = CliRunner().invoke(main, ["replay", str(path)])
    assert bad.exit_code == 12, bad.output
    ok = CliRunner().invoke(main, ["replay", str(path), "--mutant", "none"])
    assert ok.exit_code == 0, ok.output


def test_explore_counterexample_reproduces_on_the_implementation_mutant(tmp_path):
    CliRunner().invoke(main, ["explore", "--model", "wire-relay", "--mutant",
                              "success-without-store", "--out", str(tmp_path)])
    [tr] = tmp_path.glob("wire-relay-success-without-store-B7*.trace.json")
    bad = CliRunner().invoke(main, ["replay", str(tr)])
    assert bad.exit_code == 12 and "property B7 violated by the implementation" in bad.stdout
    good = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert good.exit_code == 0 and "differs from the trace" in good.stdout


def test_a_step_only_the_mutants_model_takes_is_tried_on_the_implementation(tmp_path):
    """no-generation-check's counterexample ends with a delivery the correct model does
    not enable; replay stopped before it, with one message for the buggy implementation
    and the correct one.  It now asks the implementation to take the step: the mutant
    delivers the stale answer (B1), the correct relay drops it."""
    CliRunner().invoke(main, ["explore", "--mutant", "no-generation-check", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("wire-relay-no-generation-check-B1*.trace.json")
    bad = CliRunner().invoke(main, ["replay", str(tr)])
    assert bad.exit_code == 12 and "property B1 violated by the implementation on " \
        "deliver(o=0, a=0), a step the model does not enable here" in bad.stdout, bad.stdout
    good = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert good.exit_code == 0, good.output
    assert "9. deliver(o=0, a=0)" in good.stdout and "the model does not enable this step " \
        "here, nor does the implementation take it" in good.stdout, good.stdout
    assert "violated" not in good.stdout


@pytest.mark.slow
def test_a_regression_test_of_the_fixed_implementation_fails_when_the_bug_returns(tmp_path):
    """Replay said "does not follow the trace" (exit 12) both when the implementation
    reproduced the counterexample's bug and when it did what the correct model does; the
    emitted regression test pinned only followed-or-not per step, so a test emitted on
    the fixed relay passed on the buggy one too: a check that could not fail."""
    CliRunner().invoke(main, ["explore", "--mutant", "no-generation-check", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("wire-relay-no-generation-check-B1*.trace.json")
    out = tmp_path / "test_regression_stale.py"
    r = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none", "--emit-pytest",
                                  str(out)])
    assert r.exit_code == 0 and "does not reproduce the trace: at step 9" in r.stdout, r.output

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               str(out)], capture_output=True, text=True, cwd=tmp_path)
    ran = run()
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
    # the bug comes back: the relay delivers the stale answer again
    out.write_text(out.read_text().replace("MUTANT = None", "MUTANT = 'no-generation-check'"))
    ran = run()
    assert ran.returncode == 1 and "'violated'" in ran.stdout, ran.stdout + ran.stderr


def test_an_off_model_step_parts_only_where_the_implementation_does_what_the_model_does(
        tmp_path):
    """Asked for a step the correct model does not enable, the implementation "parted"
    (exit 0) whatever state it then reached; now only if that state is the model's (its
    state before, or a step of the model from there: the correct relay drops the stale
    answer), else it diverged."""
    import json as _json
    from osf_check.fuzz.driver import DIVERGED, PARTED, make_harness, replay
    CliRunner().invoke(main, ["explore", "--mutant", "no-generation-check", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("wire-relay-no-generation-check-B1*.trace.json")
    trace = _json.loads(tr.read_text())
    assert replay(trace)[-1].outcome == PARTED

    def odd(*args, **kw):  # the stale delivery leaves the relay's generation bumped
        h = make_harness(*args, **kw)
        real_apply, real_abstract, applied = h.apply, h.abstract, [0]

        def apply(inst):
            applied[0] += 1
            return real_apply(inst)

        def abstract():
            s = real_abstract()
            if applied[0] < 9:
                return s
            i = h.model.slot_names.index("gen")
            return s[:i] + (s[i] + 1,) + s[i + 1:]
        h.apply, h.abstract = apply, abstract
        return h
    last = replay(trace, harness=odd)[-1]
    assert (last.index, last.outcome) == (9, DIVERGED), last
    assert "reaches a state no step of the model reaches" in last.note


def test_a_trace_the_implementations_abstraction_cannot_show_is_refused(tmp_path):
    """retry-mints-new-key's model keeps rows the correct model has not: its states were
    compared with the implementation's and differed at step 1, on the buggy
    implementation as on the correct one (exit 12 for both)."""
    CliRunner().invoke(main, ["explore", "--mutant", "retry-mints-new-key", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("wire-relay-retry-mints-new-key-*.trace.json")
    for extra in ([], ["--mutant", "none"]):
        r = CliRunner().invoke(main, ["replay", str(tr), *extra])
        assert r.exit_code == 150 and len(r.stderr.strip().splitlines()) == 1, r.output
        assert "a counterexample of the model mutant retry-mints-new-key" in r.stderr
        assert "osf-check fuzz --mutant retry-mints-new-key" in r.stderr


@pytest.mark.slow
def test_fuzz_cli_on_both_systems(tmp_path):
    res = CliRunner().invoke(main, ["fuzz", "--examples", "5", "--tour-depth", "3", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [r["model"] for r in doc["runs"]] == ["graph-relay", "wire-relay"]
    for r in doc["runs"]:
        assert r["tour"]["states"][0] == r["tour"]["states"][1] > 0
        # the 5 examples are shared among the configurations the profile visits
        assert sum(c["examples"] for c in r["configurations"]) >= 5 and r["failure"] is None
        assert r["configurations"][0]["own"] and len(r["configurations"]) > 1


# crashes between steps --------------------------------------------------------------------
CHILD = r"""
import sys
from osf_check.relay.wire.idempotency import DurableClaims, Scope
reg = DurableClaims(sys.argv[1])
done, running = Scope("u", "p::d", "system.activateCodexAuthProfile", "k-done"), Scope("u", "p::d", "system.activateCodexAuthProfile", "k-run")
reg.claim(done, {"n": 1}, 0.0); reg.store(done, {"result": {"ok": True}}, 1.0)
reg.claim(running, {"n": 2}, 2.0)
print("written", flush=True)
import time; time.sleep(60)
"""


def test_a_killed_desktop_loses_no_durable_claim(tmp_path):
    path = str(tmp_path / "claims.sqlite")
    run_then_kill(CHILD, path)
    reg = DurableClaims(path)
    done = Scope("u", "p::d", "system.activateCodexAuthProfile", "k-done")
    d = reg.claim(done, {"n": 1}, 10.0)
    assert (d.kind, d.answer) == ("replay", {"result": {"ok": True}})
    # the claim whose handler died with the process: busy, never run again
    assert reg.claim(Scope("u", "p::d", "system.activateCodexAuthProfile", "k-run"), {"n": 2}, 10.0).kind == "busy"


def test_reopening_the_claims_between_every_step_changes_nothing(tmp_path):
    from osf_check.fuzz.driver import Checker, make_harness, model_for
    m = model_for("wire-relay", None)
    chk = Checker(m)
    h = make_harness(m, None, str(tmp_path))
    s = h.abstract()
    labels = {i.label: i.index for i in m.instances}
    for label in ["send(o=0)", "forward(o=0, a=0)", "claim(o=0, a=0)",
                  "execute(o=0, a=0, out=success, stored=1)", "send_answer(o=0, a=0)",
                  "restart", "reconnect", "drop_response(o=0, a=0)", "send(o=0)"]:
        s = chk.check(h, labels[label], s)
        h.reopen()
        assert h.abstract() == s
    h.close()


def test_a_desktop_that_measures_keys_with_the_ascii_codec_is_caught_where_it_raised(
        monkeypatch):
    """Even keys and params end in an emoji (4 UTF-8 bytes): a desktop that measured a
    key's bytes with the ASCII codec raises on it, where no fuzzed key held a character
    past ASCII until even ones held a lone half (which the relay, Rust, now refuses)."""
    from osf_check.relay.wire import envelope
    monkeypatch.setattr(envelope, "byte_len", lambda text: len(text.encode("ascii")))
    rep = tour("wire-relay", depth=2)
    assert rep.failure is not None and re.fullmatch(
        r"the implementation raised UnicodeEncodeError on forward\(o=0, a=0\): 'ascii' codec "
        r"can't encode character '\\U0001f600' in position 8: ordinal not in range\(128\) "
        r"\(relay/wire/envelope\.py:\d+ in params_problem\)", rep.failure), rep.failure
    assert rep.path


def test_an_implementation_that_raises_fails_the_fuzz_run_not_osf_check(monkeypatch, tmp_path):
    """The command says the implementation failed (exit 12, the step and where it raised,
    a trace of the path) where it said "internal error, a bug in osf-check" (153)."""
    from osf_check.relay.wire import envelope
    monkeypatch.setattr(envelope, "byte_len", lambda text: len(text.encode("ascii")))
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--tour-depth", "2",
                                    "--examples", "0", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 12, res.output
    failure = json.loads(res.stdout)["runs"][0]["failure"]
    assert failure.startswith("the implementation raised UnicodeEncodeError on forward(o=0, "
                              "a=0)") and "relay/wire/envelope.py:" in failure, failure
    assert "internal error" not in res.output
    assert list(tmp_path.glob("*.trace.json")), "no trace of the failing path"


def test_the_tour_drives_every_lost_frame_on_the_implementation():
    """Each loss the model declares (at losses=1) is taken on the implementation: the tour
    covers every transition to depth 6, losses included."""
    from osf_check.fuzz.driver import model_for
    m = model_for("wire-relay", None, {"losses": 1, "ops": 1})
    lossy = {"send_lost", "forward_lost", "response_lost", "deliver_lost", "expire_lost",
             "reregister", "old_close"}
    assert lossy <= set(m.action_names)
    rep = tour("wire-relay", depth=6, params={"losses": 1, "ops": 1})
    assert rep.failure is None, rep.failure
    assert rep.edges_covered == rep.edges_total > 0


def _relay_with(router_cls):
    from osf_check.fuzz.driver import make_harness

    def build(*args, **kw):
        h = make_harness(*args, **kw)
        r = router_cls(limits=h.relay.limits)
        r.connect_desktop("user-1", "desk-1")
        h.relay = r
        return h
    return build


def test_a_replaced_sockets_late_close_that_takes_the_current_one_down_is_caught():
    """The relay's disconnect named no generation: when a lost registration answer made
    the desktop register a second socket, the first socket's late close took the new one
    offline and answered its requests -32011, leaving the old generation's pending."""
    from osf_check.relay.wire.relay_router import RelayRouter

    class CloseIgnoresGeneration(RelayRouter):
        def disconnect_desktop(self, user, desktop, gen=None):
            return super().disconnect_desktop(user, desktop)

    rep = tour("wire-relay", depth=4, params={"losses": 1, "ops": 1},
               harness=_relay_with(CloseIgnoresGeneration))
    assert rep.failure is not None and "old_close" in rep.failure, rep.failure
    good = tour("wire-relay", depth=4, params={"losses": 1, "ops": 1},
                harness=_relay_with(RelayRouter))
    assert good.failure is None, good.failure


def test_a_relay_that_never_switches_authority_is_caught():
    """The harness tells the relay of an authority switch and reads back whether it
    switches: a relay that ignores it fails at once, whatever requests come."""
    from osf_check.relay.wire.relay_router import RelayRouter

    class NeverSwitches(RelayRouter):
        def switch_authority(self, switching):
            pass

    params = {"switches": 1, "ops": 1}
    rep = tour("wire-relay", depth=2, params=params, harness=_relay_with(NeverSwitches))
    assert rep.failure is not None and "switching" in rep.failure, rep.failure
    good = tour("wire-relay", depth=2, params=params, harness=_relay_with(RelayRouter))
    assert good.failure is None, good.failure


def _desktop_with(router_cls):
    from osf_check.fuzz.driver import make_harness

    def build(*args, **kw):
        h = make_harness(*args, **kw)
        h.desktop.__class__ = router_cls  # the same state, a planted bug's methods
        return h
    return build


def test_a_lease_timer_the_desktop_never_arms_is_a_failure(monkeypatch):
    """The harness fired the lease itself at the document's time, so a desktop that armed
    no lease for an orphaned claim went unseen: the timer is the implementation's.  (The
    lease probe among the data probes sees it too; this is the tour's own check.)"""
    from osf_check.fuzz.wire_harness import WireHarness
    from osf_check.relay.wire.desktop_router import DesktopRouter
    monkeypatch.setattr(WireHarness, "probes", False)

    class UnarmedLease(DesktopRouter):
        def timers(self):
            return [t for t in super().timers() if t[1] != "lease"]

        def restarted(self):
            new = super().restarted()
            new.__class__ = UnarmedLease
            return new

    rep = tour("wire-relay", depth=6, params={"ops": 1, "restarts": 0, "gens": 1},
               harness=_desktop_with(UnarmedLease))
    assert rep.failure is not None and "armed no lease timer" in rep.failure, rep.failure
    good = tour("wire-relay", depth=6, params={"ops": 1, "restarts": 0, "gens": 1},
                harness=_desktop_with(DesktopRouter))
    assert good.failure is None, good.failure


def _declared_values() -> list[dict]:
    from osf_check.models.wire_relay import SPEC
    hi = next(p.hi for p in SPEC.params if p.name == "workload")
    runs = [{"workload": w, "losses": 1} for w in range(hi + 1)]
    for p in SPEC.params:
        runs += [{p.name: v} for v in sorted({p.lo, p.hi}) if p.name != "workload"
                 and v != p.default]
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("params", _declared_values(), ids=str)
def test_the_harness_drives_every_declared_parameter_value(params):
    """Each workload the model declares, and each parameter at the ends of its range, can
    be fuzzed (a configuration sweep may pick any of them)."""
    rep = hypothesis_run("wire-relay", examples=15, steps=30, start_depth=4, profile="ci",
                         params=params)
    assert rep.failure is None, rep.failure
    assert rep.hypothesis_examples >= 15 and rep.hypothesis_steps > 15


def _probe_finds(router_cls) -> str | None:
    rep = tour("wire-relay", depth=2, params={"ops": 1}, harness=_desktop_with(router_cls))
    return rep.failure


def test_the_harness_tries_each_key_class_and_the_heavy_slots():
    from osf_check.fuzz.driver import make_harness, model_for
    h = make_harness(model_for("wire-relay", None), None, None)
    h.probe_data()
    assert {"key empty", "key over limit", "key unicode over limit", "key at limit",
            "heavy files.readBinary beside full light slots"} <= h.classes
    assert _probe_finds(__import__("osf_check.relay.wire.desktop_router",
                                   fromlist=["DesktopRouter"]).DesktopRouter) is None


def test_an_empty_key_accepted_is_caught():
    """The model's keys are abstract and the harness's were never empty: a desktop that
    took an empty key (or one past 256 bytes) went unseen."""
    from osf_check.relay.wire import desktop_router as dr

    class EmptyKeyAccepted(dr.DesktopRouter):
        def receive(self, frame, now):
            p = frame["payload"]
            if p.get("idempotencyKey") == "":
                p = {**p, "idempotencyKey": "filled"}
            return super().receive({**frame, "payload": p}, now)

    why = _probe_finds(EmptyKeyAccepted)
    assert why is not None and "'empty'" in why, why


def test_heavy_and_light_slots_in_one_pool_are_caught():
    """Only two light methods were ever sent, so one pool for both classes went unseen."""
    from osf_check.relay.wire import desktop_router as dr

    class OnePool(dr.DesktopRouter):
        def _slot_free(self, call):
            taken = sum(1 for c in self.calls.values() if c.stage in dr.HOLDING)
            return taken < self.slots[False]

    why = _probe_finds(OnePool)
    assert why is not None and "heavy" in why, why


def test_a_completed_claim_released_for_every_replay_safe_method_is_caught():
    """The default workload never completed a replay-safe claim and retried it: a desktop
    that released all four (004: chunk-append only) was found only at workload=3."""
    from osf_check.relay.wire import desktop_router as dr

    class ReleasesAllFour(dr.DesktopRouter):
        def finish(self, call, result, now):
            super().finish(call, result, now)
            if call.method in ("run.chatOutboxSubmit", "files.finishChatAttachmentUpload",
                               "files.cancelChatAttachmentUpload") and call.scope is not None:
                self.memory.forget(call.scope)
                self.claims.release(call.scope)

    why = _probe_finds(ReleasesAllFour)
    assert why is not None and "run again" in why, why


def test_a_registration_refusal_skipped_is_caught():
    """Registration was bypassed (the harness connected the desktop directly): a relay
    that let an outdated app register went unseen."""
    from osf_check.relay.wire.registration import VersionGate
    from osf_check.relay.wire.relay_router import RelayRouter

    class NoVersionGate(RelayRouter):
        def register(self, user, payload, role, devices, gate, now):
            return super().register(user, {**payload, "relayProtocolVersion": "1.7"}, role,
                                    devices, VersionGate(lambda: []), now)

    rep = tour("wire-relay", depth=2, params={"ops": 1}, harness=_relay_with(NoVersionGate))
    assert rep.failure is not None and "registration" in rep.failure, rep.failure
