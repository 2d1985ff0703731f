---- MODULE MCEWD840 ----
EXTENDS EWD840
\* Spec without its fairness conjunct WF_vars(System).
SpecNoFairness == Init /\ [][Next]_vars
====
