"""The concrete reference implementation that the fuzzer drives (knows nothing of the checker).

Sans-I/O cores fed events and an injectable clock: no sleeping, no threads, no sockets.
"""
