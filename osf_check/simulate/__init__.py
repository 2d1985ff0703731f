"""Timed simulation of the Graph-run relay implementation (osf-check simulate)."""
