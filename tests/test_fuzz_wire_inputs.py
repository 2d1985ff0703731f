"""The wire fuzzer on what the model abstracts away: requests from 004's domains, the
shape of every answer, an implementation's failure reported as its own, and the tour's
snapshots.  Each planted bug below is one of tests/bugs/set1's (written outside
``osf_check/relay/``) that the fuzzer missed before."""

from __future__ import annotations

import copy
import re

import pytest

from osf_check.fuzz import oracles, wire_inputs
from osf_check.fuzz.driver import tour
from osf_check.fuzz.harness import Divergence
from osf_check.relay.wire import desktop_router as dr
from osf_check.relay.wire import idempotency as idem
from osf_check.relay.wire.errors import RELAY, TIMEOUT_MESSAGE, relay_error, timed_out
from osf_check.relay.wire.ratelimit import TokenBucket
from osf_check.relay.wire.registration import RegistrationError
from osf_check.relay.wire.relay_router import RelayRouter
from test_fuzz_wire import _relay_with


def _desktop_with(router_cls):
    from osf_check.fuzz.driver import make_harness

    def build(*args, **kw):
        h = make_harness(*args, **kw)
        h.desktop.__class__ = router_cls  # the same state, a planted bug's methods
        return h
    return build


def _finds(harness, depth=2, params=None) -> str | None:
    return tour("wire-relay", depth=depth, params=params or {"ops": 1},
                harness=harness).failure


def test_the_reference_passes_every_input_probe():
    from osf_check.fuzz.driver import make_harness, model_for
    h = make_harness(model_for("wire-relay", None), None, None)
    h._probe_data()
    assert {"pending id, other params", "flood after idling, burst 2",
            "-32028 answers after idling", "registration newer minor 1.10",
            "registration 1.9 under a rule of 1.10",
            "stored answer, Japanese over the limit in bytes, under it in characters",
            "-32603 answers' shape", "params a list", "method files.readMediaRange",
            "heavy files.readMediaRange", "light calls beside full heavy slots"} <= h.classes
    assert _finds(_relay_with(RelayRouter)) is None


def test_a_relay_that_forgets_the_generation_on_disconnect_is_a_finding_not_a_crash():
    """set1/11: disconnect deleted the connection record, so a reconnect began at
    generation 0 again; the harness read the missing record and osf-check exited 153."""
    class Forgets(RelayRouter):
        def disconnect_desktop(self, user, desktop, gen=None):
            out = super().disconnect_desktop(user, desktop, gen)
            conn = self.desktops.get((user, desktop))
            if conn is not None and not conn.online:
                del self.desktops[(user, desktop)]
            return out

    why = _finds(_relay_with(Forgets), depth=4)
    assert why is not None and "generation is lost" in why, why


def test_a_pending_id_reused_with_other_params_is_caught():
    """set1/13: the pending fingerprint left params out (-32021 for another request)."""
    class IgnoresParams(RelayRouter):
        def on_request(self, c, frame, now):
            p = frame.get("payload") if isinstance(frame, dict) else None
            old = self.pending.get((c.user, c.desktop, p.get("id"))) if isinstance(p, dict) \
                else None
            if old is not None and old.method == p.get("method") and isinstance(
                    p.get("params"), dict):
                frame = {**frame, "payload": {**p, "params": old.payload["params"]}}
            return super().on_request(c, frame, now)

    why = _finds(_relay_with(IgnoresParams))
    assert why is not None and "other params under a pending id" in why, why


def test_a_stored_answer_measured_in_characters_is_caught():
    """set1/17: 256 KiB counted in characters: a Japanese answer of 274 KB was a success."""
    class Chars(idem.DurableClaims):
        def store(self, s, answer, now):
            text = idem.compact(answer)
            if len(text) <= idem.MAX_ANSWER < len(text.encode("utf-8")):
                self._store(s, answer, now)
                return answer, True
            return super().store(s, answer, now)

    class Router(dr.DesktopRouter):
        durable_claims = Chars

    why = _finds(_desktop_with(Router))
    assert why is not None and "UTF-8 bytes" in why and "stored and sent as success" in why, why


def test_a_version_compared_as_text_is_caught():
    """set1/18: "1.10" < "1.7" as text: a newer app was refused."""
    class TextOrder(RelayRouter):
        def register(self, user, payload, role, devices, gate, now):
            v = payload.get("relayProtocolVersion") if isinstance(payload, dict) else None
            if isinstance(v, str) and v < "1.7":
                raise RegistrationError("protocolUpdateRequired", "update the app")
            return super().register(user, payload, role, devices, gate, now)

    why = _finds(_relay_with(TextOrder))
    assert why is not None and "1.10" in why, why


def test_a_bucket_capped_before_its_refill_is_caught():
    """set1/19: min(burst, tokens) + refill: an idle bucket held more than its burst."""
    class CapFirst(TokenBucket):
        def take(self, now):
            if self.last is not None and now > self.last:
                self.tokens = min(float(self.burst), self.tokens) + (now - self.last) * self.rate
                self.last = now
            return super().take(now)

    class Router(RelayRouter):
        def on_request(self, c, frame, now):
            self.buckets.setdefault(c.client_id, CapFirst(self.burst, self.rate))
            return super().on_request(c, frame, now)

    why = _finds(_relay_with(Router))
    assert why is not None and "idle" in why and "burst" in why, why


def test_a_timeout_answer_marked_retryable_is_caught():
    """set1/20: the dispatch cut's -32603 carried data.retryable (004: no flag)."""
    class Flagged(dr.DesktopRouter):
        def fire(self, kind, ref, now):
            call = self.calls.get(ref) if isinstance(ref, int) else None
            done = super().fire(kind, ref, now)
            if call is not None and (call.answer or {}).get("error", {}).get(
                    "message") == TIMEOUT_MESSAGE:
                call.answer["error"]["data"] = {"retryable": True}
            return done

    why = _finds(_desktop_with(Flagged))
    assert why is not None and "retryable=True" in why and "-32603" in why, why


@pytest.mark.parametrize("name,value,method", [
    ("LOADS", dr.HEAVY, "run.chatLoadPageBefore"),  # set2/08: every heavy call gets 95 s
    ("DISPATCH_LOADS", dr.DISPATCH, "run.chatLoad"),  # the two loads cut at 45 s
])
def test_each_method_class_is_cut_at_its_own_dispatch_limit(monkeypatch, name, value, method):
    """004: 45 s of dispatch, 95 for run.chatLoad and run.chatLoadThread only; the
    model's phones send neither a load nor another heavy call."""
    def fresh():
        return dr.DesktopRouter(":memory:", "user-1")
    tried = wire_inputs.dispatch_deadlines(fresh)
    assert {"dispatch limit of run.chatLoadThread", "dispatch limit of files.readBinary",
            "dispatch limit of system.ping"} <= tried and len(tried) == len(oracles.HEAVY_004) + 1
    assert _finds(None) is None
    monkeypatch.setattr(dr, name, value)
    with pytest.raises(Divergence, match=f"^{re.escape(method)} whose handler runs 70 s"):
        wire_inputs.dispatch_deadlines(fresh)
    why = _finds(None)
    assert why is not None and "dispatch is cut after" in why and method in why, why


def test_the_shape_oracle_takes_each_relay_answer_and_refuses_a_flipped_flag():
    for code, (_, _, retryable) in RELAY.items():
        data = {"scope": "client", "limit": 1, "current": 1} if code == -32020 else \
            {"requiredScopes": ["rpc"]} if code == -32027 else \
            {"reason": "protocolUpdateRequired"} if code == -32026 else {}
        answer = relay_error(code, **data)
        assert oracles.shape_problem(answer) is None, code
        if retryable is not None:
            flipped = copy.deepcopy(answer)
            flipped["error"]["data"]["retryable"] = not retryable
            assert oracles.shape_problem(flipped) is not None, code
    assert oracles.shape_problem(timed_out()) is None
    assert "lacks scope" in oracles.shape_problem(relay_error(-32020))
    assert oracles.shape_problem({"result": 1, "error": {"code": 1, "message": "m"}})


def test_the_tour_snapshots_pickle_and_never_deep_copy(monkeypatch):
    """The tour's time went to copy.deepcopy of the harness at every snapshot and restore
    (its slowest part, measured with cProfile); the wire harness pickles instead, and
    falls back to deepcopy only for objects that do not pickle."""
    calls = []
    real = copy.deepcopy
    monkeypatch.setattr(copy, "deepcopy", lambda *a, **k: calls.append(1) or real(*a, **k))
    rep = tour("wire-relay", depth=3)
    assert rep.failure is None and rep.states_covered == rep.states_total
    assert calls == []


def test_a_harness_that_does_not_pickle_still_tours():
    class Local(dr.DesktopRouter):  # a class in a function: pickle cannot name it
        pass

    rep = tour("wire-relay", depth=3, harness=_desktop_with(Local))
    assert rep.failure is None and rep.states_covered == rep.states_total


def test_every_declared_workload_and_parameter_end_is_a_configuration():
    """The CI run fuzzed workload 0 alone, with no lost frame and no authority switch."""
    from osf_check.fuzz.configs import configurations
    from osf_check.models.wire_relay import SPEC
    toured = configurations(SPEC, {}, "ci")[1:]
    for p in SPEC.params:
        for v in {p.lo, p.hi, *(range(p.lo, p.hi + 1) if p.name == "workload" else ())}:
            if v != p.default:
                assert any(at.get(p.name) == v for at in toured), (p.name, v)


def test_a_bug_only_another_workload_shows_is_caught_by_the_configurations(monkeypatch):
    """An outbox submit kept pending 90 s (004: 31 minutes): the default workload sends
    no outbox submit, so only its configurations can show it (the data probes, which
    try an outbox submit on their own, are left out)."""
    from osf_check.fuzz.wire_harness import WireHarness
    monkeypatch.setattr(WireHarness, "probes", False)
    class ShortOutbox(RelayRouter):
        def on_request(self, c, frame, now):
            out = super().on_request(c, frame, now)
            for e in self.pending.values():
                if e.method == "run.chatOutboxSubmit":
                    e.deadline = min(e.deadline, now + 90.0)
            return out

    from osf_check.fuzz.configs import configurations
    from osf_check.fuzz.sweep import fuzz_others
    from osf_check.models.wire_relay import SPEC
    assert tour("wire-relay", depth=3, harness=_relay_with(ShortOutbox)).failure is None
    cfgs = configurations(SPEC, {}, "ci")
    rows, rep = fuzz_others("wire-relay", cfgs, [0] * len(cfgs), mutant=None, seed=0,
                            steps=10, profile="ci", harness=_relay_with(ShortOutbox))
    assert rep is not None and rep.params == {"workload": 1}, rows
    assert [r["params"] for r in rows] == [{"workload": 1}], rows


@pytest.mark.skipif(not __import__("os").access("/dev/shm", __import__("os").W_OK),
                    reason="no /dev/shm here")
def test_the_walks_keep_their_database_files_in_memory():
    """Each commit of the walks' SQLite files waited for the disk: most of the walks' time
    under cProfile.  They are kept in /dev/shm where there is one."""
    from osf_check.fuzz.driver import hypothesis_run, make_harness
    dirs = []

    def build(model, mutant, tmpdir, *rest):
        dirs.append(tmpdir)
        return make_harness(model, mutant, tmpdir, *rest)
    rep = hypothesis_run("wire-relay", examples=3, steps=5, start_depth=2, profile="ci",
                         harness=build)
    assert rep.failure is None and dirs and all(d.startswith("/dev/shm/") for d in dirs), dirs


def test_a_bug_patched_in_between_two_runs_is_probed_again(monkeypatch):
    """The probes' outcome is kept for one run only: a module patched after a passing run
    in the same process (as a test or a notebook does) is tried as it is then."""
    from osf_check.relay.wire import errors
    assert _finds(None) is None
    monkeypatch.setattr(dr, "timed_out", lambda: {"error": {
        "code": -32603, "message": TIMEOUT_MESSAGE, "data": {"retryable": True}}})
    why = _finds(None)
    assert why is not None and "retryable=True" in why, why
    assert errors.timed_out()["error"].get("data") is None  # only the router's name patched
