---- MODULE MCTokenRing ----
EXTENDS TokenRing
\* Spec without its fairness conjunct WF_vars(Next).
SpecNoFairness == Init /\ [][Next]_vars
====
