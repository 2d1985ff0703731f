---- MODULE MCSimpleAllocator ----
EXTENDS SimpleAllocator
\* SimpleAllocator with weak instead of strong fairness of each client's allocations.
SimpleAllocatorWF ==
  /\ Init /\ [][Next]_vars
  /\ \A c \in Clients: WF_vars(Return(c, alloc[c]))
  /\ \A c \in Clients: WF_vars(\E S \in SUBSET Resources: Allocate(c,S))
====
