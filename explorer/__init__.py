"""The checker's engines and what they share.

- :mod:`.check`: one model checked (search, graph checks, verdict): what ``explore`` runs;
- :mod:`.engines`: the registry of search engines (``--engine``);
- :mod:`.result`: what a search learns, whichever engine ran it;
- :mod:`.explicit`, :mod:`.vector`: the two engines; :mod:`.store`: the vector engine's
  storage; :mod:`.compiled`: the DSL compiled for them;
- :mod:`.graph`: the reach and fair checks on a kept graph;
- :mod:`.symbolic`: z3 (``prove``'s BMC and k-induction, the timing analysis);
- :mod:`.prove`, :mod:`.symmetry`: ``prove``, and the symmetry reduction with its proof.
"""
