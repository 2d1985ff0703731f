"""Models: the DSL and the protocol models written in it (this room knows nothing else)."""
