"""The desktop's HTTP compatibility pre-check before it connects (004)."""

from __future__ import annotations

import json

import pytest

from osf_check.relay import constants
from osf_check.relay.wire.precheck import DECISIONS, Precheck

DESKTOP_RESULT = {"knownVersion": True, "protocolSupported": True}


def answer(decision: str, **changed) -> dict:
    return {**{"compatible": decision == "compatible", "decision": decision,
               "message": f"message for {decision}", "policyVersion": "p-1",
               "requiredRelayProtocolVersion": "1.7", "desktop": DESKTOP_RESULT}, **changed}


def started(now: float = 0.0) -> Precheck:
    check = Precheck("3.2.0", "macos")
    check.start(now)
    return check


def test_the_request_carries_the_desktops_own_descriptor_only():
    check = Precheck("3.2.0", "macos", "1.7")
    assert check.start(now=10.0) == {
        "method": "POST", "path": "/public/compatibility/check",
        "body": {"desktop": {"appVersion": "3.2.0", "platform": "macos",
                             "relayProtocolVersion": "1.7"}}}
    assert check.timers() == [(10.0 + constants.PRECHECK_TIMEOUT, "precheck")]


def test_there_are_004s_eight_decisions():
    assert len(DECISIONS) == 8 and DECISIONS[0] == "compatible"


@pytest.mark.parametrize("decision", DECISIONS)
def test_each_decision(decision):
    """compatible connects; each of the seven others ends the connection with a
    compatibility error carrying the decision and the server's message."""
    check = started()
    check.answered(200, json.dumps(answer(decision)), now=1.0)
    if decision == "compatible":
        assert (check.outcome, check.why, check.error) == ("connect", "compatible", None)
    else:
        assert check.outcome == "refuse"
        assert (check.error.decision, check.error.message, check.error.required) == (
            decision, f"message for {decision}", "1.7")


@pytest.mark.parametrize("status, body, why", [
    (503, answer("blockedByPolicy"), "error status 503"),
    (200, b"<html>", "unreadable body"),
    (200, "[1, 2]", "unreadable body"),
    (200, {k: v for k, v in answer("blockedByPolicy").items() if k != "desktop"},
     "no desktop result"),
    (200, dict(answer("blockedByPolicy"), decision="tooOld"), "unreadable body"),
    (200, answer("blockedByPolicy", compatible=True), "unreadable body"),
    (200, answer("compatible", compatible=False), "unreadable body"),
])
def test_the_precheck_fails_open(status, body, why):
    check = started()
    check.answered(status, body, now=1.0)
    assert (check.outcome, check.why, check.error) == ("connect", why, None)


def test_no_answer_within_5_s_connects_and_a_later_answer_changes_nothing():
    check = started(now=100.0)
    assert not check.fire(now=104.9) and check.outcome is None
    assert check.fire(now=105.0) and check.outcome == "connect"
    assert check.why == "no answer within 5 s" and check.timers() == []
    check.answered(200, answer("blockedByPolicy"), now=105.5)
    assert check.outcome == "connect" and check.error is None


def test_an_answer_reported_at_the_deadline_comes_too_late():
    check = started(now=0.0)
    check.answered(200, answer("blockedByPolicy"), now=5.0)
    assert (check.outcome, check.why) == ("connect", "no answer within 5 s")


def test_an_unreachable_server_lets_the_desktop_connect():
    check = started()
    check.unreachable(now=0.5)
    assert (check.outcome, check.why) == ("connect", "unreachable")
