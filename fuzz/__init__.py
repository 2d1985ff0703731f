"""Fuzzing: drive the reference implementation by the model and check it step by step."""
