"""The property catalogue (A1…, B1…) and the mutants that break each property."""
