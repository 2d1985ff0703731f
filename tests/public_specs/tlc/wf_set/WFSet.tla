---- MODULE WFSet ----
\* A and B each enabled in one state of the cycle 0 <-> 1; together always enabled on it.
EXTENDS Naturals
VARIABLE x
Init == x = 0
M == \/ x = 0 /\ x' = 1
     \/ x = 1 /\ x' = 0
A == x = 0 /\ x' = 2
B == x = 1 /\ x' = 2
Next == M \/ A \/ B
SpecSet == Init /\ [][Next]_x /\ WF_x(A \/ B)
SpecEach == Init /\ [][Next]_x /\ WF_x(A) /\ WF_x(B)
Reach2 == <>(x = 2)
====
