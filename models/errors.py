"""What the user got wrong, as exception types every room can raise.

Only these (and :class:`osf_check.models.dsl.ModelError`) mean *bad input*: the command line
answers them with one line and exit code 150.  Any other exception is a bug in
osf-check and is reported as an internal error (exit 153), never as bad input.

>>> issubclass(UnknownName, LookupError), issubclass(BadValue, ValueError)
(True, True)
"""

from __future__ import annotations

__all__ = ["InputError", "UnknownName", "BadValue"]


class InputError(Exception):
    """Bad input: an unknown name, a value out of range, a malformed file."""


class UnknownName(InputError, LookupError):
    """A model, property, mutant, assumption or parameter that does not exist."""


class BadValue(InputError, ValueError):
    """A value the user gave that cannot be used (out of range, malformed)."""
