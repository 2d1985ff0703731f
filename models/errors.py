"""What the user got wrong, as exception types every room can raise.

Only these (and :class:`ModelError`) mean *bad input*: the command line
answers them with one line and exit code 150.  Any other exception is a bug in
osf-check and is reported as an internal error (exit 153), never as bad input.

>>> issubclass(UnknownName, LookupError), issubclass(BadValue, ValueError)
(True, True)
"""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["InputError", "UnknownName", "BadValue", "ModelError", "did_you_mean"]


class InputError(Exception):
    """Bad input: an unknown name, a value out of range, a malformed file."""


class UnknownName(InputError, LookupError):
    """A model, property, mutant, assumption or parameter that does not exist."""


class BadValue(InputError, ValueError):
    """A value the user gave that cannot be used (out of range, malformed)."""


class ModelError(Exception):
    """The model itself is inconsistent (a bug in a model, not in user input)."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The known name closest to a mistyped one, as a question that ends with a space
    (to go before the list of known names), or nothing when none is close.

    >>> did_you_mean("outbox-of", ["outbox-off", "status-only"])
    "did you mean 'outbox-off'? "
    >>> did_you_mean("zzz", ["outbox-off"])
    ''
    """
    known = list(known)
    folded = {k.lower(): k for k in known}  # (an id typed in lower case: a2 for A2)
    near = difflib.get_close_matches(str(name).lower(), list(folded), n=1, cutoff=0.6)
    return f"did you mean {folded[near[0]]!r}? " if near else ""
