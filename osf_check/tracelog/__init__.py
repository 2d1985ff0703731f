"""Trace validation of recorded logs: does some behaviour of the model explain what a
deployment logged?  ``mapping`` reads the user's file that maps a deployment's event
names and fields to the model's actions, ``check`` streams a log through the model's
possible states, and ``record`` writes logs of the Python reference implementation (what
instrumentation around it would record), for the tests and the benchmark.
"""
