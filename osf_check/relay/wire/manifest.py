"""004's method manifest: every method 004 names, with its mutation flag, its slot and its
deadline class, and what 004 says it does.

The relay's allow-list, the desktop router's list, the phone's enum and the fuzzer's
inputs all read this one table, as 004's stations read their copies of
``rpc-contract.v1.json``.  004 counts more methods than it names (its stated totals are
below); a method it does not name cannot be written down without inventing it, so the
relay answers -32601 for it, as it would for a method missing from its list.

>>> MANIFEST["run.chatOutboxSubmit"].mutation, MANIFEST["run.chatLoad"].slot
(True, 'heavy')
>>> sorted(LOADS)
['run.chatLoad', 'run.chatLoadThread']
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Method", "MANIFEST", "HEAVY", "LOADS", "MUTATIONS", "STATED_METHODS",
           "STATED_MUTATIONS", "STATED_BY_NAMESPACE", "DIAGRAM_METHODS",
           "DIAGRAM_MUTATIONS", "STORAGE_FORMAT_BY_AGENT", "namespace",
           "storage_format_problem"]

#: 004's text: "Das Manifest führt 74 Methoden in vier Namespaces auf. 25 davon sind
#: Mutationen"; its namespace table gives 13, 15, 23 and 23.
STATED_METHODS = 74
STATED_MUTATIONS = 25
STATED_BY_NAMESPACE = {"system": 13, "session": 15, "run": 23, "files": 23}
#: 004's diagram: "rpc-contract.v1.json 69 Methoden · 24 Mutationen" (the text wins)
DIAGRAM_METHODS = 69
DIAGRAM_MUTATIONS = 24


class Method(NamedTuple):
    """One method of the manifest.  A tuple, so ``MANIFEST[m][0]`` is its mutation flag."""

    #: it needs an idempotency key (the relay's -32026 without one): only where 004 says
    #: so; a method whose class 004 does not give is routed as a read
    mutation: bool
    #: heavy: one of the desktop's 2 heavy slots (004's "Schwere Gruppe"); light: the 8
    slot: str = "light"
    #: default, or one of 004's own deadline rows: load (the first timeline loads:
    #: 95 s dispatch, 120 s pending), older_page, outbox (31 min pending, iOS waits 20 s)
    deadline: str = "default"
    #: what 004 says the method does, if it says anything beyond its name
    behaviour: str = ""


def _m(mutation: bool = False, slot: str = "light", deadline: str = "default",
       behaviour: str = "") -> Method:
    return Method(mutation, slot, deadline, behaviour)


_HEAVY, _READ = "heavy", False
_REPLAY_SAFE = "may run again after an interrupted first copy (its own ledger)"

MANIFEST: dict[str, Method] = {
    # system ("Namespace, Beispiele", the reply-style table, "Beide Agenten nutzen
    # dieselben RPC-Methoden"): 10 named
    "system.ping": _m(behaviour="answers ok, service, timestampMs and capabilities"),
    "system.codexAuthProfiles": _m(behaviour="the Codex auth profiles (Codex only)"),
    "system.claudeAccounts": _m(behaviour="the Claude accounts (Claude only)"),
    "system.activateCodexAuthProfile": _m(True, behaviour="takes profileId; switches, sends "
                                          "a desktop event naming the agent, answers the fresh list"),
    "system.activateClaudeAccount": _m(True, behaviour="takes accountId; switches, sends a "
                                       "desktop event naming the agent, answers the fresh list"),
    "system.agentUsageHistory": _m(behaviour="takes agent: codex or claude, anything else is "
                                   "invalid params"),
    "system.getVoiceVocabulary": _m(),
    "system.getReplyStyle": _m(behaviour="no params; label, description, style and options "
                               "(value, label, description), all written by the desktop"),
    "system.updateReplyStyle": _m(True, behaviour="takes style: ste or default; stores the one "
                                  "style of all agents, answers as system.getReplyStyle"),
    "system.codexUsageLimits": _m(behaviour="Codex only"),
    # session: 4 named
    "session.listProjects": _m(),
    "session.create": _m(behaviour="takes agent (codex or claude) and an optional "
                         "conversationId; a session of the project already holding that "
                         "conversation is returned and nothing is created"),
    "session.getHistoryState": _m(),
    "session.syncHistoryState": _m(behaviour="the one method whose params the relay checks"),
    # run: 14 named (the timeline rows of "Schwere Gruppe", the deadline diagram)
    "run.chatLoad": _m(_READ, _HEAVY, "load", "result holds storageFormat: indexed (Codex) "
                       "or native (Claude)"),
    "run.chatLoadPageBefore": _m(_READ, _HEAVY, "older_page"),
    "run.chatLoadThread": _m(_READ, _HEAVY, "load"),
    "run.chatLoadThreadPageBefore": _m(_READ, _HEAVY),
    "run.chatReconcileSessions": _m(_READ, _HEAVY, behaviour="at most 16 sessions, 8 MiB "
                                    "result, 256 outbox entries per session; storageFormat"),
    "run.chatPreviewExistingSession": _m(_READ, _HEAVY),
    "run.chatOutboxSubmit": _m(True, deadline="outbox", behaviour="checks the session exists; "
                               "entries and receipt; " + _REPLAY_SAFE),
    "run.chatOutboxStopAndSendNow": _m(True, behaviour="stops only the run the phone saw, "
                                       "then sends, even if the relay stopped waiting"),
    "run.chatResolveApproval": _m(),
    "run.cancel": _m(),
    "run.chatContextUsage": _m(behaviour="takes appSessionId; contextUsage, the last measure "
                               "or null"),
    "run.improveText": _m(behaviour="takes appSessionId, text and mode (improve or ste); an "
                          "ephemeral Codex turn, answers text"),
    "run.chatCommandOutputRead": _m(behaviour="pages of at most 256 KiB"),
    "run.chatFetchWebPageMarkdownPreview": _m(_READ, _HEAVY),
    # files: 13 named (media, attachments, git rows of "Schwere Gruppe")
    "files.readContent": _m(),
    "files.readBinary": _m(_READ, _HEAVY, behaviour="at most 16 MiB"),
    "files.getGitFileDiffPatch": _m(_READ, _HEAVY),
    "files.getGitDiffDetail": _m(_READ, _HEAVY),
    "files.getPreviewMetadata": _m(_READ, _HEAVY),
    "files.readMediaRendition": _m(_READ, _HEAVY),
    "files.prepareMediaStream": _m(_READ, _HEAVY),
    "files.readMediaRange": _m(_READ, _HEAVY),
    "files.saveChatAttachment": _m(_READ, _HEAVY),
    # "die vier Methoden für den Upload in Chunks"
    "files.beginChatAttachmentUpload": _m(_READ, _HEAVY),
    "files.appendChatAttachmentUploadChunk": _m(True, _HEAVY, behaviour=_REPLAY_SAFE
                                                + "; releases its completed claim"),
    "files.finishChatAttachmentUpload": _m(True, _HEAVY, behaviour=_REPLAY_SAFE),
    "files.cancelChatAttachmentUpload": _m(True, _HEAVY, behaviour=_REPLAY_SAFE),
}

#: the methods that take one of the 2 heavy slots
HEAVY = frozenset(m for m, d in MANIFEST.items() if d.slot == "heavy")
#: the two first timeline loads, with the longer dispatch and relay limits
LOADS = frozenset(m for m, d in MANIFEST.items() if d.deadline == "load")
#: the methods 004 calls mutations (they need an idempotency key)
MUTATIONS = frozenset(m for m, d in MANIFEST.items() if d.mutation)

#: 004: "Das Manifest legt beide Werte unter timelineStorageFormat.byAgent fest": the
#: storageFormat a timeline load or reconcile answers, by the session's agent
STORAGE_FORMAT_BY_AGENT = {"codex": "indexed", "claude": "native"}


def storage_format_problem(by_agent: dict[str, str]) -> str | None:
    """The contract check of a copy's storage formats: 004 has it fail on any pair but
    codex/indexed and claude/native.

    >>> storage_format_problem({"codex": "native", "claude": "native"})
    "timelineStorageFormat.byAgent: codex answers 'native', the manifest says 'indexed'"
    """
    for agent in sorted(set(by_agent) | set(STORAGE_FORMAT_BY_AGENT)):
        want, got = STORAGE_FORMAT_BY_AGENT.get(agent), by_agent.get(agent)
        if want != got:
            return (f"timelineStorageFormat.byAgent: {agent} answers {got!r}, the manifest "
                    f"says {want!r}")
    return None


def namespace(method: str) -> str:
    return method.split(".", 1)[0]
