---- MODULE MCTwoPhase ----
EXTENDS TwoPhase
\* TCommit's invariant, which TwoPhase implements, stated on TwoPhase's variables.
TCConsistent == TC!TCConsistent
====
