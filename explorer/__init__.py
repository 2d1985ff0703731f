"""Engines: explicit BFS, graph checks (networkx), symbolic (z3)."""
