---- MODULE MCTCommit ----
EXTENDS TCommit
\* Every RM eventually decides.  TCSpec has no fairness conjunct.
AllDecide == <>(\A rm \in RM : rmState[rm] \in {"committed", "aborted"})
====
