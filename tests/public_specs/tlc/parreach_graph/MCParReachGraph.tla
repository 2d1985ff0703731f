---- MODULE MCParReachGraph ----
\* ParReach on a graph where every node is reachable from n1 and n4 leads back to it
EXTENDS ParReach, TLC

CONSTANTS n1, n2, n3, n4

GraphSucc == (n1 :> {n2, n3}) @@ (n2 :> {n4}) @@ (n3 :> {n4}) @@ (n4 :> {n1})

\* as MCParReach.tla has it: TLC cannot enumerate Seq(Nodes), which ReachableFrom reads
LimitedSeq(S) == UNION {[1 .. len -> S] : len \in 0 .. Cardinality(Nodes)}
====
