"""The method manifest holds exactly the methods 004 names, in 004's classes.

Counted by hand from 004 (the wire protocol), section by section; a name appearing in
several sections is listed once, where it first appears.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from osf_check.relay import constants
from osf_check.relay.wire import manifest
from osf_check.relay.wire.envelope import request
from osf_check.relay.wire.manifest import MANIFEST
from osf_check.relay.wire.phone import Phone
from osf_check.relay.wire.relay_router import Client, RelayRouter, keep_pending

USER, DESK = "user-1", "desk-1"
PHONE = Client(USER, "phone-1", DESK)

#: "Den kanonischen Methodenvertrag finden", the namespace table ("Beispiele") and the
#: reply-style table below it
CONTRACT = ("system.ping", "system.codexAuthProfiles", "system.claudeAccounts",
            "system.activateCodexAuthProfile", "system.activateClaudeAccount",
            "system.agentUsageHistory", "system.getVoiceVocabulary", "system.getReplyStyle",
            "session.listProjects", "session.create", "session.getHistoryState",
            "run.chatLoad", "run.chatLoadPageBefore", "run.chatOutboxSubmit",
            "run.chatOutboxStopAndSendNow", "run.cancel", "run.chatContextUsage",
            "files.readContent", "files.readBinary", "files.getGitFileDiffPatch",
            "files.beginChatAttachmentUpload", "system.updateReplyStyle", "run.improveText",
            # the size-limit table
            "run.chatReconcileSessions", "run.chatCommandOutputRead")
#: "Beide Agenten nutzen dieselben RPC-Methoden"
AGENTS = ("run.chatResolveApproval", "system.codexUsageLimits")
#: "Jede Station hat ihre eigene Frist": the deadlines and the table "Schwere Gruppe"
#: (its "vier Methoden für den Upload in Chunks" are begin, append, finish and cancel)
DEADLINES = ("run.chatLoadThread", "run.chatLoadThreadPageBefore",
             "run.chatPreviewExistingSession", "files.getPreviewMetadata",
             "files.readMediaRendition", "files.prepareMediaStream", "files.readMediaRange",
             "files.saveChatAttachment", "files.getGitDiffDetail",
             "run.chatFetchWebPageMarkdownPreview")
#: "Routing ist an aktive Verbindungsgenerationen gebunden": the relay's params check
ROUTING = ("session.syncHistoryState",)
#: "Zwei Schichten schützen unterschiedliche Operationen": the replay-safe four
REPLAY = ("files.appendChatAttachmentUploadChunk", "files.finishChatAttachmentUpload",
          "files.cancelChatAttachmentUpload")
NAMED = CONTRACT + AGENTS + DEADLINES + ROUTING + REPLAY

#: the methods 004 calls mutations: "Mutation." (updateReplyStyle), "Beide activate-Methoden
#: sind Mutationen", "Eine konkrete Mutation" (outbox submit), "die zweite
#: Outbox-Mutation", and the replay-safe upload steps, which hold idempotency claims
MUTATIONS = {"system.updateReplyStyle", "system.activateCodexAuthProfile",
             "system.activateClaudeAccount", "run.chatOutboxSubmit",
             "run.chatOutboxStopAndSendNow", *REPLAY}
#: the table "Schwere Gruppe"
HEAVY = {"run.chatLoad", "run.chatLoadPageBefore", "run.chatLoadThread",
         "run.chatLoadThreadPageBefore", "run.chatReconcileSessions",
         "run.chatPreviewExistingSession", "files.getPreviewMetadata", "files.readBinary",
         "files.readMediaRendition", "files.prepareMediaStream", "files.readMediaRange",
         "files.saveChatAttachment", "files.beginChatAttachmentUpload", *REPLAY,
         "files.getGitDiffDetail", "files.getGitFileDiffPatch",
         "run.chatFetchWebPageMarkdownPreview"}


def test_the_manifest_holds_exactly_the_methods_004_names():
    # 004 states 74 methods (its diagram: 69) but names 41 of them: 10 system, 4 session,
    # 14 run, 13 files
    assert len(NAMED) == len(set(NAMED)) == 41
    assert sorted(MANIFEST) == sorted(NAMED)
    per = {ns: sum(manifest.namespace(m) == ns for m in NAMED) for ns in manifest.STATED_BY_NAMESPACE}
    assert per == {"system": 10, "session": 4, "run": 14, "files": 13}
    assert all(per[ns] <= manifest.STATED_BY_NAMESPACE[ns] for ns in per)
    assert sum(manifest.STATED_BY_NAMESPACE.values()) == manifest.STATED_METHODS == 74


def test_the_manifest_flags_only_the_mutations_004_names():
    assert manifest.MUTATIONS == MUTATIONS and len(MUTATIONS) <= manifest.STATED_MUTATIONS
    assert {m for m, d in MANIFEST.items() if d[0]} == MUTATIONS  # the tuple's first field


def test_the_manifest_has_004s_heavy_group_and_deadline_rows():
    assert manifest.HEAVY == HEAVY
    assert {d.slot for d in MANIFEST.values()} == {"light", "heavy"}
    by_class = {c: {m for m, d in MANIFEST.items() if d.deadline == c}
                for c in ("load", "older_page", "outbox")}
    assert by_class == {"load": {"run.chatLoad", "run.chatLoadThread"},
                        "older_page": {"run.chatLoadPageBefore"},
                        "outbox": {"run.chatOutboxSubmit"}}
    assert constants.LOADS is manifest.LOADS


#: named by 004 without its class: it does not call them mutations, so no key is asked
UNCLASSED = ("session.create", "run.cancel", "run.chatResolveApproval",
             "files.saveChatAttachment", "files.beginChatAttachmentUpload")


@pytest.mark.parametrize("method", UNCLASSED)
def test_a_method_004_does_not_call_a_mutation_is_forwarded_without_a_key(method):
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    assert r.on_request(PHONE, request("r-1", method, {}), 0.0) == []
    assert [type(m).__name__ for m in r.route((USER, DESK, "r-1"))] == ["ToDesktop"]


@pytest.mark.parametrize("method, refused", [(sorted(MUTATIONS)[0], -32026),
                                             ("system.listEverything", -32601)])
def test_a_mutation_without_a_key_and_an_unnamed_method_are_refused(method, refused):
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    out = r.on_request(PHONE, request("r-1", method, {}), 0.0)
    assert out[0].frame["payload"]["error"]["code"] == refused


def test_each_station_takes_its_deadline_from_the_manifest_class():
    assert keep_pending("run.chatOutboxSubmit") == constants.RELAY_OUTBOX
    assert keep_pending("run.chatLoadThread") == constants.RELAY_FIRST_LOAD
    assert keep_pending("run.chatLoadPageBefore") == constants.RELAY_OLDER_PAGE
    assert Phone("p-1", "ios").waits("run.chatOutboxSubmit") == constants.PHONE_OUTBOX_IOS
    assert Phone("p-1", "ios").waits("run.chatLoad") == constants.PHONE_FIRST_LOAD


def test_the_user_docs_take_the_method_counts_from_the_generated_list():
    """A count of 004's methods written by hand goes stale when the manifest changes: the
    docs link the generated list instead (the freshness of which test_describe checks)."""
    root = Path(__file__).resolve().parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    counted = re.compile(r"\b\d+ (?:named )?(?:methods|mutations)\b|\b\d+ of its \d+\b")
    found = {p.name: counted.findall(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}
    listed = (root / "docs" / "reference" / "methods.md").read_text(encoding="utf-8")
    assert f"It names {len(MANIFEST)} of them" in listed
    assert all(f"| `{m}` |" in listed for m in MANIFEST)
