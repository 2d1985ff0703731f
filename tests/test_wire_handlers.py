"""The desktop's handlers for the methods whose behaviour 004 describes."""

from __future__ import annotations

import pytest

from osf_check.relay.wire import envelope as env
from osf_check.relay.wire.app import DesktopApp
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.errors import answer_class, kind_of
from osf_check.relay.wire.manifest import MANIFEST


def result(answer: dict) -> dict:
    assert "result" in answer, answer
    return answer["result"]


def test_ping_answers_004s_example_through_the_desktop_router():
    app, d = DesktopApp(now_ms=1789214400000), DesktopRouter(":memory:", "user-1")
    fwd = env.request("request-101", "system.ping", {})
    fwd["payload"].update(clientId="<source-client-id>", userId="user-1")
    call = d.receive(fwd, now=0.0)
    assert d.start(call, now=0.0) == "run"
    d.finish(call, app.handle("system.ping", {}), now=0.0)
    payload = d.take_answer(call)["payload"]
    assert {k: payload[k] for k in ("clientId", "id", "result", "isFinal")} == {
        "clientId": "<source-client-id>", "id": "request-101",
        "result": {"ok": True, "service": "desktop-relay", "timestampMs": 1789214400000,
                   "capabilities": ["run.cancel.exact-run.v1"]},
        "isFinal": True}
    d.close()


def test_the_reply_style_is_one_setting_the_desktop_words():
    app = DesktopApp()
    got = result(app.handle("system.getReplyStyle", {}))
    assert set(got) == {"label", "description", "style", "options"} and got["style"] == "default"
    assert [o["value"] for o in got["options"]] == ["default", "ste"]
    assert all(set(o) == {"value", "label", "description"} and o["label"] for o in got["options"])
    updated = result(app.handle("system.updateReplyStyle", {"style": "ste"}))
    assert updated == {**got, "style": "ste"} == result(app.handle("system.getReplyStyle", {}))
    for bad in ({"style": "fancy"}, {}, {"style": "ste", "agent": "codex"}):
        assert kind_of(app.handle("system.updateReplyStyle", bad)) == "invalid_params"
    assert app.reply_style == "ste"


def test_improve_text_runs_an_ephemeral_turn_with_the_modes_instructions():
    seen = []
    app = DesktopApp(sessions={"s-1": None},
                     turn=lambda rules, text: seen.append(rules) or text.upper())
    before = (dict(app.sessions), dict(app.outbox), dict(app.context))
    p = {"appSessionId": "s-1", "text": "fix me", "mode": "improve"}
    assert result(app.handle("run.improveText", p)) == {"text": "FIX ME"}
    assert result(app.handle("run.improveText", {**p, "mode": "ste"})) == {"text": "FIX ME"}
    assert seen == [app.improve_prompt, app.ste_rules]
    assert (app.sessions, app.outbox, app.context) == before
    for bad in ({**p, "mode": "shorten"}, {"appSessionId": "s-1", "mode": "ste"}):
        assert kind_of(app.handle("run.improveText", bad)) == "invalid_params"


def test_context_usage_is_the_last_measure_or_null():
    app = DesktopApp(sessions={"s-1": None})
    usage = {"appSessionId": "s-1"}
    assert result(app.handle("run.chatContextUsage", usage)) == {"contextUsage": None}
    app.measured("s-1", {"usedTokens": 10, "windowTokens": 100})
    app.measured("s-1", {"usedTokens": 30, "windowTokens": 100})
    assert result(app.handle("run.chatContextUsage", usage)) == {
        "contextUsage": {"usedTokens": 30, "windowTokens": 100}}
    assert result(app.handle("run.chatContextUsage", {"appSessionId": "s-2"}))[
        "contextUsage"] is None
    assert kind_of(app.handle("run.chatContextUsage", {})) == "invalid_params"


def test_session_create_returns_the_session_already_holding_the_conversation():
    app = DesktopApp()
    first = result(app.handle("session.create", {"agent": "claude", "conversationId": "c-1",
                                                 "projectId": "p"}))
    again = result(app.handle("session.create", {"agent": "claude", "conversationId": "c-1",
                                                 "projectId": "p"}))
    assert again == first and len(app.records) == 1 and first["agent"] == "claude"
    other = result(app.handle("session.create", {"agent": "claude", "conversationId": "c-1",
                                                 "projectId": "q"}))
    fresh = [result(app.handle("session.create", {"agent": "codex"})) for _ in range(2)]
    assert len({first["sessionId"], other["sessionId"], *(f["sessionId"] for f in fresh)}) == 4
    assert first["sessionId"] in app.sessions  # a session the outbox can submit to
    for bad in ({}, {"agent": "gemini"}, {"agent": "codex", "conversationId": 7}):
        assert kind_of(app.handle("session.create", bad)) == "invalid_params"


@pytest.mark.parametrize("activate, listing, field, agent", [
    ("system.activateCodexAuthProfile", "system.codexAuthProfiles", "profileId", "codex"),
    ("system.activateClaudeAccount", "system.claudeAccounts", "accountId", "claude")])
def test_an_account_switch_emits_its_agent_and_answers_the_fresh_list(activate, listing,
                                                                       field, agent):
    app = DesktopApp()
    app.handle(activate, {field: "a-1"})
    fresh = result(app.handle(activate, {field: "a-2"}))
    assert fresh == result(app.handle(listing, {}))
    assert list(fresh.values())[0] == [{field: "a-1", "active": False},
                                       {field: "a-2", "active": True}]
    assert app.events[-1] == {"agent": agent, field: "a-2"}
    assert kind_of(app.handle(activate, {})) == "invalid_params"


def test_usage_history_takes_codex_or_claude_only():
    app = DesktopApp(usage={"codex": [{"day": "2026-10-05", "tokens": 5}]})
    assert result(app.handle("system.agentUsageHistory", {"agent": "codex"}))["history"] == [
        {"day": "2026-10-05", "tokens": 5}]
    assert result(app.handle("system.agentUsageHistory", {"agent": "claude"}))["history"] == []
    for bad in ({"agent": "gpt"}, {}, {"agent": None}):
        assert kind_of(app.handle("system.agentUsageHistory", bad)) == "invalid_params"


def test_a_method_004_only_names_answers_the_final_not_implemented_class():
    app = DesktopApp()
    described = set(app._handlers()) | {m for m in MANIFEST if "ChatAttachmentUpload" in m}
    named_only = sorted(set(MANIFEST) - described)
    assert "files.readContent" in named_only and "system.ping" not in named_only
    for method in named_only:
        answer = app.handle(method, {})
        assert kind_of(answer) == "not_implemented" and answer_class(answer) == "final"


# the agent of a session (004: "Beide Agenten nutzen dieselben RPC-Methoden") -----------------
def _two_agents() -> tuple[DesktopApp, str, str]:
    app = DesktopApp()
    codex = result(app.handle("session.create", {"agent": "codex"}))["sessionId"]
    claude = result(app.handle("session.create", {"agent": "claude"}))["sessionId"]
    return app, codex, claude


def test_a_timeline_load_answers_the_storage_format_of_the_sessions_agent():
    app, codex, claude = _two_agents()
    assert result(app.handle("run.chatLoad", {"sessionId": codex}))["storageFormat"] == "indexed"
    assert result(app.handle("run.chatLoad", {"sessionId": claude}))["storageFormat"] == "native"
    both = result(app.handle("run.chatReconcileSessions", {"sessionIds": [claude, codex]}))
    assert [(s["sessionId"], s["storageFormat"]) for s in both["sessions"]] == [
        (claude, "native"), (codex, "indexed")]
    assert kind_of(app.handle("run.chatLoad", {"sessionId": "nope"})) == "not_found"
    assert kind_of(app.handle("run.chatReconcileSessions", {"sessionIds": [codex, "nope"]})) \
        == "not_found"


def test_the_contract_check_fails_on_any_other_storage_format_pair():
    from osf_check.relay.wire.manifest import STORAGE_FORMAT_BY_AGENT, storage_format_problem
    assert STORAGE_FORMAT_BY_AGENT == {"codex": "indexed", "claude": "native"}
    assert storage_format_problem(dict(STORAGE_FORMAT_BY_AGENT)) is None
    for wrong in ({"codex": "native", "claude": "indexed"}, {"codex": "indexed"},
                  {"codex": "indexed", "claude": "native", "gpt": "native"}):
        assert storage_format_problem(wrong), wrong


def test_each_run_chat_call_goes_to_the_agent_of_its_session():
    """The same params for both agents: the session id chooses the agent."""
    app, codex, claude = _two_agents()
    for sid in (codex, claude):
        app.handle("run.chatOutboxSubmit", env.outbox_params(sid, f"op-{sid}"))
        app.handle("run.chatOutboxStopAndSendNow", {
            "sessionId": sid, "queueId": "q-1", "operationId": f"op-{sid}",
            "expectedRunId": "r", "expectedThreadId": "t", "expectedTurnId": "u"})
        app.handle("run.chatContextUsage", {"appSessionId": sid})
    assert app.routed == [
        ("run.chatOutboxSubmit", codex, "codex"), ("run.chatOutboxStopAndSendNow", codex, "codex"),
        ("run.chatContextUsage", codex, "codex"),
        ("run.chatOutboxSubmit", claude, "claude"),
        ("run.chatOutboxStopAndSendNow", claude, "claude"),
        ("run.chatContextUsage", claude, "claude")]
    assert app.agent_of(codex) == "codex" and app.agent_of("nope") is None
    assert DesktopApp(sessions={"s": None}, default_agent="claude").agent_of("s") == "claude"


def test_a_codex_timeline_load_has_its_own_90_s_inside_the_95():
    """004: "Ein Codex-Timeline-Ladevorgang hat seine eigene Frist von 90 Sekunden innerhalb
    der 95": the session's agent marks a Codex load; a Claude load has the 95 s alone."""
    from osf_check.relay.wire.errors import CODEX_LOAD_MESSAGE, TIMEOUT_MESSAGE
    app, codex, claude = _two_agents()
    d = DesktopRouter(":memory:", "user-1", agent_of=app.agent_of)
    calls = {}
    for sid in (codex, claude):
        fwd = env.request(f"load-{sid}", "run.chatLoad", {"sessionId": sid})
        fwd["payload"].update(clientId="phone-1::desk-1", userId="user-1")
        calls[sid] = d.receive(fwd, now=0.0)
        assert d.start(calls[sid], now=0.0) == "run"
    assert d.tick(89.9) == []
    assert d.tick(90.0) == [("codex_load", calls[codex].cid)]
    assert calls[claude].stage == "dispatch"
    assert d.take_answer(calls[codex])["payload"]["error"] == {
        "code": -32603, "message": CODEX_LOAD_MESSAGE}
    assert d.tick(95.0) == [("dispatch", calls[claude].cid)]
    assert d.take_answer(calls[claude])["payload"]["error"]["message"] == TIMEOUT_MESSAGE


def test_a_codex_load_that_answers_in_time_is_not_cut():
    app, codex, _ = _two_agents()
    d = DesktopRouter(":memory:", "user-1", agent_of=app.agent_of)
    fwd = env.request("load-1", "run.chatLoad", {"sessionId": codex})
    fwd["payload"].update(clientId="phone-1::desk-1", userId="user-1")
    call = d.receive(fwd, now=0.0)
    d.start(call, now=0.0)
    d.finish(call, app.handle("run.chatLoad", {"sessionId": codex}), now=89.0)
    assert d.tick(90.0) == []
    assert result(d.take_answer(call)["payload"])["storageFormat"] == "indexed"
