"""The wire fuzzer at the edges of 004's durations and on mixed traffic past the rate
limit.  Each planted bug below is written here (outside ``osf_check/relay/``); the tour,
the book of deadlines and the earlier input probes all passed it."""

from __future__ import annotations

import pytest

from osf_check.fuzz import wire_expiry, wire_inputs, wire_traffic
from osf_check.fuzz.driver import make_harness, model_for
from osf_check.fuzz.harness import Divergence
from osf_check.relay.wire import registration
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.relay_router import Client, RelayRouter
from test_fuzz_wire import _relay_with
from test_fuzz_wire_inputs import _desktop_with, _finds

CLIENT = Client("user-1", "phone-0", "desk-1")


def test_the_reference_passes_the_edge_and_traffic_probes():
    h = make_harness(model_for("wire-relay", None), None, None)
    h._probe_data()
    assert {"compatibility rules' cache at its edge", "retention at its edge",
            "lease at its edge", "slot wait at its edge", "enqueue at its edge", "relay timeout of run.chatOutboxSubmit at its edge",
            "mixed traffic, malformed JSON", "mixed traffic past the limit"} <= h.classes


class _SilentTextSpends(RelayRouter):
    """Over the limit, a frame that is no JSON at all spends an answer token."""

    def on_request(self, c, frame, now):
        out = super().on_request(c, frame, now)
        if not out and isinstance(frame, str) and c.client_id in self.answer_buckets:
            self.answer_buckets[c.client_id].take(now)
        return out


def test_silent_frames_spending_the_answer_bucket_are_caught():
    wire_inputs.rate_limits(_SilentTextSpends, CLIENT)  # the flood probe passes it
    with pytest.raises(Divergence, match="malformed JSON"):
        wire_traffic.mixed_traffic(_SilentTextSpends, CLIENT)
    why = _finds(_relay_with(_SilentTextSpends))
    assert why is not None and "mixed traffic" in why, why


def test_the_traffic_oracle_keeps_the_documents_answer_bucket():
    """The -32028 bucket is 004's 300 / 150 per second, not the relay's setting."""
    class Generous(RelayRouter):
        def __init__(self, **kw):
            super().__init__(**{**kw, "answer_burst": kw.get("answer_burst", 300) + 1})

    with pytest.raises(Divergence, match="004's buckets give nothing"):
        wire_traffic.mixed_traffic(Generous, CLIENT)


class _LongCache(registration.VersionGate):
    def __init__(self, load_rules, ttl=registration.RULES_TTL):
        super().__init__(load_rules, ttl + 30)


class _StaleWhenUnreadable(registration.VersionGate):
    """Keeps the last rules when a read fails, instead of refusing everyone."""

    def required(self, now):
        try:
            return super().required(now)
        except registration.RegistrationError:
            if self._cached is None:
                raise
            return self._cached[1]


@pytest.mark.parametrize("gate, says", [(_LongCache, "a rule of 1.8 added"),
                                        (_StaleWhenUnreadable, "the rules unreadable")])
def test_a_rules_cache_wrong_at_its_edge_is_caught(monkeypatch, gate, says):
    monkeypatch.setattr(registration, "VersionGate", gate)
    why = _finds(_relay_with(RelayRouter))
    assert why is not None and says in why and "60 s" in why, why


class _ExpiresASecondEarly(RelayRouter):
    def tick(self, now):
        return super().tick(now + 1.0)


def test_a_pending_entry_expired_early_is_caught():
    with pytest.raises(Divergence, match="still pending"):
        wire_expiry.pending_expiry(lambda: _connected(_ExpiresASecondEarly()), CLIENT)
    why = _finds(_relay_with(_ExpiresASecondEarly))
    assert why is not None and "-32021" in why, why


def _connected(r):
    r.connect_desktop("user-1", "desk-1")
    return r


class _ForgetsAnHourEarly(DesktopRouter):
    """Its timers are right, but a claim treats a row stored 47 h ago as forgotten."""

    def _decide(self, call, now, keep):
        if call.scope is not None:
            self.claims.forget(call.scope, now + 3600)
        return super()._decide(call, now, keep)


class _LeaseEndsOnRestart(DesktopRouter):
    """After a restart every running row's lease counts as over."""

    def restarted(self):
        new = super().restarted()
        new.claims.db.execute("UPDATE claims SET lease_over=1 WHERE state='running'")
        return new


@pytest.mark.parametrize("router, says", [(_ForgetsAnHourEarly, "stored answer, kept 48 h"),
                                          (_LeaseEndsOnRestart, "busy until the 5-minute")])
def test_a_durable_row_wrong_at_its_edge_is_caught(router, says):
    why = _finds(_desktop_with(router))
    assert why is not None and says in why, why


class _TicksASecondAhead(DesktopRouter):
    """Its timers are right, but it fires whatever falls due within the next second."""

    def tick(self, now):
        return super().tick(now + 1.0)


@pytest.mark.parametrize("probe", [wire_expiry.slot_wait, wire_expiry.enqueue,
                                   wire_expiry.lease, wire_expiry.retention])
def test_each_desktop_duration_is_judged_at_its_edge(probe):
    def fresh():
        return _TicksASecondAhead(":memory:", "user-1")
    with pytest.raises(Divergence, match="004"):
        probe(fresh)
    probe(lambda: DesktopRouter(":memory:", "user-1"))
    why = _finds(_desktop_with(_TicksASecondAhead))
    assert why is not None and "004" in why, why
