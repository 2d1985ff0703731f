"""Traces: the JSON format, ITF export, rendering (text, DOT, Mermaid, SVG/PNG), replay."""
