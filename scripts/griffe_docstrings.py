"""Griffe extension: read the code's docstrings as the API pages show them.

The docstrings are written for ``help()`` and doctest: bare ``>>>`` sessions and Sphinx
roles (``:class:`~osf_check.api.Checker```).  Markdown would run a session into one
paragraph (and take ``r["a"]["b"]`` for a link), and print a role as it is; so a session
becomes a ``pycon`` block and a role the name it refers to, as code.  Named by the
Python handler's ``extensions`` in ``mkdocs.yml``; the code is not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")


def _role(m: re.Match[str]) -> str:
    target = m.group(2)
    return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"


def fence_sessions(text: str) -> str:
    """``text`` with each doctest session (a ``>>>`` line up to the next blank line, at
    its own indentation) fenced as a ``pycon`` block."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>") and not (out and out[-1].startswith("```")):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestSessions(griffe.Extension):
    """Rewrite each object's docstring once it is loaded."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_role, fence_sessions(obj.docstring.value))
