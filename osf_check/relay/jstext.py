"""Text as the Graph-run relay's JavaScript holds, measures and writes it (000: its
desktop half is ``useConnectedGraphRelay.ts``; the wire relay is Rust: :mod:`.wire.text`).

A JavaScript string is a sequence of UTF-16 code units and may hold half a surrogate
pair: ``"\\udc00"`` is valid JSON, so a Graph's result or error can carry one.
Python holds such a half as a lone code point, which its UTF-8 codec (and so SQLite's
binding) refuses.  These helpers take text as JavaScript does:

- :func:`stringify` is ``JSON.stringify``: a lone half is written as its escape, so the
  text is valid UTF-8 and ``json.loads`` gives the half back;
- :func:`units` is ``String.length``: UTF-16 code units.

A pair given as two code points (``"\\ud83d\\ude00"``) is the one character JavaScript
reads there.

>>> stringify({"a": "x\\udc00"}, separators=(",", ":"))
'{"a":"x\\\\udc00"}'
>>> json.loads(stringify("\\udc00")) == "\\udc00"
True
>>> paired("a\\ud83d\\ude00") == "a😀", paired("x") == "x"
(True, True)
>>> stringify("\\ud83d\\ude00\\udc00")
'"😀\\\\udc00"'
>>> units("😀"), units("\\ud83d\\ude00"), units("\\udc00")
(2, 2, 1)
"""

from __future__ import annotations

import json
import re
from typing import Any

#: a lone half of a surrogate pair (in a text whose pairs are :func:`paired`)
HALF = re.compile("[\ud800-\udfff]")


def paired(text: str) -> str:
    """``text`` with every pair given as two code points joined into its character."""
    if not HALF.search(text):  # nearly every text: no code point to join, no round trip
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def stringify(value: Any, **dumps: Any) -> str:
    """``JSON.stringify(value)`` (with ``json.dumps``'s layout arguments): characters as
    they are, a lone half escaped as JavaScript escapes it (lower-case hex)."""
    text = paired(json.dumps(value, ensure_ascii=False, **dumps))
    return HALF.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def units(text: str) -> int:
    """``text.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
