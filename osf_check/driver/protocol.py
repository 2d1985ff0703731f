"""The messages of the driver protocol, and their validation against its JSON Schema.

Every message, both ways, is checked against ``schema/driver.schema.json`` before it is
sent or believed: an adapter that answers something else is reported as a broken
adapter, quoting what it said, never read as a verdict on the protocol it implements.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Callable

VERSION = 1

#: the request types, and the reply type each expects
REPLIES = {"hello": "welcome", "reset": "observed", "step": "observed", "observe": "observed",
           "snapshot": "saved", "restore": "observed", "drop": "ok", "reopen": "observed",
           "advance": "observed", "idle": "observed", "late": "observed", "bye": "ok"}
REQUESTS = tuple(REPLIES)
REPLY_TYPES = ("welcome", "observed", "saved", "ok", "error")


class AdapterError(Exception):
    """The adapter crashed, hung, or said something the protocol does not allow.

    ``kind`` is one of ``crashed``, ``hung``, ``malformed`` or ``refused`` (the adapter
    answered ``error``)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@cache
def schema() -> dict[str, Any]:
    text = resources.files("osf_check").joinpath("schema/driver.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def _validator(name: str) -> Callable[[Any], Any]:
    # compiled to Python by fastjsonschema: every message is validated, and a tour sends
    # tens of thousands of them (jsonschema's interpreter took most of the harness's time)
    import fastjsonschema
    doc = schema()
    return fastjsonschema.compile({"$schema": doc["$schema"], "$ref": f"#/$defs/{name}",
                                   "$defs": doc["$defs"]})


def problem(msg: Any, name: str) -> str | None:
    """Why ``msg`` is not a valid ``name`` message (a ``$defs`` entry), or None."""
    import fastjsonschema
    try:
        _validator(name)(msg)
    except fastjsonschema.JsonSchemaValueException as e:
        if name == "observed" and "any definition" in e.message:  # the anyOf of observed
            return "no state, and no violations saying why there is none"
        where = e.name.removeprefix("data").lstrip(".") if e.name else ""
        return f"{where + ': ' if where else ''}{e.message.removeprefix(e.name or '').strip()}"
    return None


def quote(line: str, limit: int = 160) -> str:
    """A line as an error message shows it: one line, cut at ``limit`` characters."""
    one = line.rstrip("\n").replace("\n", "\\n")
    return one if len(one) <= limit else one[:limit] + f"… ({len(one):,} characters)"


def parse_reply(line: str, request: dict[str, Any]) -> dict[str, Any]:
    """The adapter's answer to ``request``, checked: JSON, the schema of the expected
    reply type, the same id.  An ``error`` reply raises ``AdapterError('refused')``."""
    try:
        msg = json.loads(line)
    except ValueError:
        raise AdapterError("malformed", f"the adapter answered {request['type']} with a line "
                                        f"that is not JSON: {quote(line)}") from None
    kind = msg.get("type") if isinstance(msg, dict) else None
    if kind == "error":
        why = problem(msg, "error")
        if why is None:
            raise AdapterError("refused", f"the adapter refused {request['type']}"
                                          f"{' ' + request['label'] if 'label' in request else ''}"
                                          f": {msg['message']}")
    want = REPLIES[request["type"]]
    why = problem(msg, want) if kind == want else \
        f"a {want!r} reply was expected, not {kind!r}"
    if why is None and msg["id"] != request["id"]:
        why = f"the reply's id is {msg['id']}, the request's {request['id']}"
    if why is not None:
        raise AdapterError("malformed", f"the adapter's answer to {request['type']} breaks "
                                        f"the driver protocol ({why}): {quote(line)}")
    return msg


def state_table(model: Any) -> str:
    """The JSON shape of ``model``'s state in the protocol, as a Markdown table (the one
    ``docs/driver-protocol.md`` shows; a test keeps the two equal)."""
    from osf_check.models.describe import json_shape  # (the reference pages' words)
    rows = ["| variable | JSON value | meaning |", "|---|---|---|"]
    for v in model.variables:
        shape = json_shape(v).replace("|", "\\|")
        rows.append(f"| `{v.name}` | {shape} | {v.doc or ''} |")
    return "\n".join(rows) + "\n"
