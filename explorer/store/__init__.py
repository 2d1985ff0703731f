"""Where the vector engine keeps what it found: states packed into words (:mod:`.layout`),
the visited set and parent links by level (:mod:`.levels`), the kept edges
(:mod:`.edges`), checkpoints (:mod:`.checkpoint`) and how freed memory is kept for the
next level (:mod:`.allocator`).  No search lives here: the engines call these.
"""

from .allocator import huge_zeros, keep_freed_memory
from .checkpoint import damaged, load, run_identity, save
from .edges import EdgeLog
from .layout import Layout
from .levels import (IdsExhausted, LevelStore, first, first_inverse, get_bits, key_rows, least,
                     rank, set_bits, sortable)

__all__ = ["huge_zeros", "keep_freed_memory", "damaged", "load", "run_identity", "save",
           "EdgeLog", "Layout", "IdsExhausted", "LevelStore", "first", "first_inverse",
           "get_bits", "key_rows", "least", "rank", "set_bits", "sortable"]
