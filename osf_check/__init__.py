"""osf-check's command line (the thin shell that wires the rooms together)."""
