---- MODULE SFSub ----
\* A strongly fair action A enabled only in state 1 of the cycle 0 <-> 1, 0 <-> 3.
EXTENDS Naturals
VARIABLE x
Init == x = 0
M == \/ x = 0 /\ x' = 1
     \/ x = 1 /\ x' = 0
     \/ x = 0 /\ x' = 3
     \/ x = 3 /\ x' = 0
A == x = 1 /\ x' = 2
Next == M \/ A
Spec == Init /\ [][Next]_x /\ WF_x(M) /\ SF_x(A)
Reach2 == <>(x = 2)
====
