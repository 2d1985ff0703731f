---- MODULE MCParReachNoFair ----
\* ParReach's Spec without its fairness: a process may stop for good, so Termination fails
EXTENDS MCParReach

SpecNoFair == Init /\ [][Next]_vars
====
