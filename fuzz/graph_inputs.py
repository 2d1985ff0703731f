"""Idempotency keys from 000's domain, not the model's: what the graph model abstracts
to a key's number, tried on fresh servers of the implementation's own class and judged
from 000 alone (:func:`~.oracles.graph_key_ok`).

The model's agent holds one key per intent and the model decides what its start calls
get; here each key class is sent once: lengths at and around 8 and 128 characters in
ASCII, Japanese and emoji, blanks, half a surrogate pair, and a key again with only its
case changed or with blanks around it.  The keys the agent itself sends in the walks are :data:`AGENT_KEYS`.
"""

from __future__ import annotations

from typing import Any, Callable

from osf_check.relay.graph.server import ToolError

from .harness import Divergence
from .oracles import graph_key_classes, graph_key_ok, utf16_length

SESSION = "gs_" + "ab" * 16
AGENT = 1
#: what a sync uploaded: a start for a session no sync uploaded is refused
SYNCED = {SESSION: {"slug": "s", "project_id": "p-1"}}

#: the key each of the model's intents sends, valid all (the model decides their
#: answers): non-ASCII, long in bytes and UTF-16 units but within 128 characters, and
#: the first two differ only in case, so that a server measuring bytes or units, or
#: comparing keys without their case, leaves the model at the first start calls
AGENT_KEYS = ("Key-" + "鍵" * 44, "kEY-" + "鍵" * 44, "Zz" + "😀" * 126)


def measure(key: str) -> str:
    """A key's length in the three measures a server may take by mistake."""
    units = utf16_length(key)
    size = len(key.encode("utf-8", "surrogatepass"))
    return f"{len(key)} characters, {size} UTF-8 bytes, {units} UTF-16 units"


def _start(server: Any, key: str, what: str) -> dict[str, Any] | None:
    """The server's ticket for a start call with ``key``, or None if it refused it with
    a tool error; anything else it raises is a divergence (000: a tool answers or errs)."""
    args = {"graph_session_id": SESSION, "idempotency_key": key, "arguments": {}}
    server.sessions = dict(SYNCED)
    try:
        return server.run_graph_session(AGENT, args)
    except ToolError:
        return None
    except Exception as e:  # noqa: BLE001 (the implementation's failure, reported as one)
        raise Divergence(f"run_graph_session raised {type(e).__name__} ({e}) on {what} "
                         f"({measure(key)}): a tool call gets a ticket or a tool "
                         f"error") from None


def start_keys(new_server: Callable[[], Any]) -> set[str]:
    """Each key class on a fresh server: admitted (a ticket its agent reads, the same
    ticket again for the same key, another run for the key in another case) exactly when
    000 admits it, else refused with a tool error and nothing queued."""
    tried = set()
    for name, key in graph_key_classes().items():
        want, what = graph_key_ok(key), f"a key of class {name!r}"
        server = new_server()
        ticket = _start(server, key, what)
        if ticket is None and want:
            raise Divergence(f"run_graph_session refused {what} ({measure(key)}); 000: "
                             f"idempotency_key is 8 to 128 characters")
        if ticket is None and server.runs:
            raise Divergence(f"run_graph_session refused {what} and queued a run all the same")
        if ticket is not None and want is False:
            raise Divergence(f"run_graph_session accepted {what} ({measure(key)}); 000: "
                             f"idempotency_key is 8 to 128 characters")
        if ticket is not None:
            _same_key_again(server, key, ticket["command_id"], what)
        tried.add(f"key {name}")
    return tried | case_variants(new_server) | trim_variants(new_server)


def _same_key_again(server: Any, key: str, cid: str, what: str) -> None:
    """The run is its agent's, and the same key again is a retry: the same ticket."""
    if server.get_graph_run(AGENT, cid).get("command_id") != cid:
        raise Divergence(f"the run started with {what} is not readable by its agent")
    again = _start(server, key, what)
    if again is None or again["command_id"] != cid or len(server.runs) != 1:
        raise Divergence(f"a retry with {what} got {again} and {len(server.runs)} runs; 000: "
                         f"the same key is the same run ({cid})")


def case_variants(new_server: Callable[[], Any]) -> set[str]:
    """Keys that differ only in case are two keys: two runs (000 compares a key as it is
    given; a server that ignored case would answer the second with the first's run)."""
    tried = set()
    keys = {"the agent's first key": AGENT_KEYS[0],
            "mixed case with accents": graph_key_classes()["mixed case with accents"]}
    for name, key in keys.items():
        other = key.swapcase()
        server = new_server()
        first = _start(server, key, "a valid key")
        second = _start(server, other, "the same key in another case")
        if first is None or second is None or first["command_id"] == second["command_id"]:
            raise Divergence(f"the keys {key[:24]!r}… and {other[:24]!r}…, which differ only "
                             f"in case, got {first} and {second}; 000: two keys, two runs")
        tried.add(f"key in another case, {name}")
    return tried


def trim_variants(new_server: Callable[[], Any]) -> set[str]:
    """Keys equal only once trimmed are two keys: two runs (000 names no trimming; a
    server that trimmed keys would answer the second with the first's run)."""
    tried = set()
    key = AGENT_KEYS[0]
    for name, other in {"blanks around it": f"  {key[:120]}  ",
                        "a tab and a newline after it": f"{key[:120]}\t\n",
                        "ideographic spaces around it": f"\u3000{key[:120]}\u3000"}.items():
        server = new_server()
        first = _start(server, key[:120], "a valid key")
        second = _start(server, other, f"the same key with {name}")
        if first is None or second is None or first["command_id"] == second["command_id"]:
            raise Divergence(f"the keys {key[:24]!r}… and {other[:24]!r}…, equal only once "
                             f"trimmed, got {first} and {second}; 000: two keys, two runs")
        tried.add(f"key equal to another once trimmed, {name}")
    return tried
