"""Text as the Graph-run relay's JavaScript holds, measures and writes it (000: its
desktop half is ``useConnectedGraphRelay.ts``; the wire relay is Rust: :mod:`.wire.text`).

A JavaScript string is a sequence of UTF-16 code units and may hold half a surrogate
pair: ``"\\udc00"`` is valid JSON, so a Graph's result or error can carry one.
Python holds such a half as a lone code point, which its UTF-8 codec (and so SQLite's
binding) refuses.  These helpers take text as JavaScript does:

- :func:`stringify` is ``JSON.stringify``: a lone half is written as its escape, so the
  text is valid UTF-8 and ``json.loads`` gives the half back; numbers are written as
  JavaScript writes them (:func:`number`), not as Python does (``0.0`` is ``0``);
- :func:`units` is ``String.length``: UTF-16 code units.

A pair given as two code points (``"\\ud83d\\ude00"``) is the one character JavaScript
reads there.

>>> stringify({"a": "x\\udc00", "cost": 0.0})
'{"a":"x\\\\udc00","cost":0}'
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
import math
import re
from typing import Any

#: a lone half of a surrogate pair (in a text whose pairs are :func:`paired`)
HALF = re.compile("[\ud800-\udfff]")


def paired(text: str) -> str:
    """``text`` with every pair given as two code points joined into its character."""
    if not HALF.search(text):  # nearly every text: no code point to join, no round trip
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def stringify(value: Any, *, separators: tuple[str, str] = (",", ":")) -> str:
    """``JSON.stringify(value)``: compact unless ``separators`` says otherwise; characters
    as they are, a lone half escaped as JavaScript escapes it (lower-case hex); numbers as
    JavaScript writes them (:func:`number`); an object's integer-like keys first, as a
    JavaScript object orders them."""
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return number(value)
    item, pair = separators
    if isinstance(value, (list, tuple)):
        return "[" + item.join(stringify(v, separators=separators) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(((_key(k), v) for k, v in value.items()), key=_property_order)
        return "{" + item.join(_string(k) + pair + stringify(v, separators=separators)
                               for k, v in keys) + "}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def number(x: int | float) -> str:
    """A number as ``JSON.stringify`` writes it (ECMA-262 Number::toString): the shortest
    digits that read back as the same double (Python's ``repr`` finds the same ones), in
    decimal notation for exponents from -7 to 20, else as ``1.5e+21`` / ``1e-7``; zero and
    negative zero as ``0``; NaN and the infinities as ``null``.  A Python ``int`` is the
    double JavaScript would read for it: past 2**53 it loses its last digits, past the
    largest double it is Infinity (``null``)."""
    try:
        x = float(x)
    except OverflowError:
        return "null"
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + number(-x)
    digits, point = _shortest(x)
    k = len(digits)
    if k <= point <= 21:
        return digits + "0" * (point - k)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    e = point - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def _shortest(x: float) -> tuple[str, int]:
    """(digits, point) of a positive double: its shortest round-trip digits, no zero at
    either end, and where the decimal point falls among them (``0.05`` is ``("5", -1)``,
    ``1500.0`` is ``("15", 4)``)."""
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent or 0)
    stripped = digits.lstrip("0")
    return stripped.rstrip("0"), point - (len(digits) - len(stripped))


def _string(text: str) -> str:
    escaped = paired(json.dumps(text, ensure_ascii=False))
    return HALF.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)


def _key(key: Any) -> str:
    """A dict key as the property name JavaScript would hold (``json.dumps`` accepts
    numbers, booleans and None as keys too)."""
    return key if isinstance(key, str) else stringify(key).strip('"')


def _property_order(item: tuple[str, Any]) -> tuple[int, int]:
    """JavaScript lists an object's array-index keys (``"0"``, ``"42"``: canonical
    integers below 2**32 - 1) first, ascending, then the others in insertion order
    (``sorted`` is stable)."""
    key = item[0]
    if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") \
            and int(key) < 2**32 - 1:
        return 0, int(key)
    return 1, 0


def units(text: str) -> int:
    """``text.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
