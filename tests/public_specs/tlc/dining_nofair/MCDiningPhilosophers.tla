---- MODULE MCDiningPhilosophers ----
EXTENDS DiningPhilosophers
\* Spec without its fairness conjunct \A self: WF_vars(Philosopher(self)).
SpecNoFairness == Init /\ [][Next]_vars
====
