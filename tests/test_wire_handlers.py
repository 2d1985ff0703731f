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
