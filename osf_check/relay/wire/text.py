"""Text as the wire relay and the desktop router hold it: Rust strings.

004 (in German, the original) names their sources: the relay's
``request_validation.rs``, ``pending_requests.rs`` and ``registry.rs``, the desktop's
``router/mod.rs`` and ``server_message_handler.rs`` (the English rendering leaves the
names out).  A Rust string is valid Unicode: it holds no half of a surrogate pair.
``"\\udc00"`` is valid JSON, but Rust's JSON readers refuse it as a string, so a frame
holding one is not a request either side can read (:func:`unreadable`).  For the rest:

- :func:`trim` is ``str::trim``: Unicode White_Space at both ends, where Python's
  ``str.strip`` trims U+001C to U+001F too;
- :func:`byte_len` is ``str::len``: UTF-8 bytes;
- :func:`compact` is the JSON written on the socket and stored: characters as they are.

A pair given as two code points (``"\\ud83d\\ude00"``) is the one character a JSON
reader makes of its two escapes.

>>> trim("\\u2003 r-1\\n"), trim("\\x1fr-1")
('r-1', '\\x1fr-1')
>>> unreadable({"id": "r-1", "params": {"k\\udc00": 1}}), unreadable({"id": "😀"})
(True, False)
>>> unreadable(["\\ud83d\\ude00"]), byte_len("é\\ud83d\\ude00")
(False, 6)
"""

from __future__ import annotations

import json
from typing import Any

from ..jstext import HALF, paired  # pairing code points is the same in every language

__all__ = ["WHITE_SPACE", "trim", "byte_len", "unreadable", "compact", "paired"]

#: Unicode's White_Space property (Rust's ``char::is_whitespace``)
WHITE_SPACE = "".join(map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680,
                                *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F,
                                0x3000]))


def trim(text: str) -> str:
    """``text.trim()`` (of text :func:`unreadable` passed: a pair given as two code points
    comes back as its character)."""
    return paired(text).strip(WHITE_SPACE)


def byte_len(text: str) -> int:
    """``text.len()``: UTF-8 bytes (of text :func:`unreadable` passed)."""
    return len(paired(text).encode("utf-8"))


def unreadable(value: Any) -> bool:
    """Whether a JSON value holds, in a string or an object's key, half a surrogate pair
    that no pair completes: no Rust string can hold it."""
    if isinstance(value, str):
        return HALF.search(paired(value)) is not None
    if isinstance(value, dict):
        return any(unreadable(k) or unreadable(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(unreadable(v) for v in value)
    return False


def compact(value: Any, **dumps: Any) -> str:
    """``value`` as JSON (``json.dumps``'s layout arguments), characters as they are."""
    return paired(json.dumps(value, ensure_ascii=False, **dumps))
