"""Trace validation of recorded logs: does some behaviour of the model explain what a
deployment logged?  ``mapping`` reads the user's file that maps a deployment's event
names and fields to the model's actions, ``check`` streams a log through the model's
possible states, and ``record`` writes logs of the Python reference implementation (what
instrumentation around it would record), for the tests and the benchmark.
"""

#: unlogged steps searched in a row between two lines, by default: enough for the
#: shipped models' environment (a lost request, a lost reply and the retry they cause,
#: for several calls at once); a search cut shorter makes the answer "unknown"
HIDDEN_DEPTH = 12
