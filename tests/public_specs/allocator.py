"""The simple resource allocator, from tlaplus/Examples
``specifications/allocator/SimpleAllocator.tla`` (written from that spec).  ``unsat`` and
``alloc`` are, as in the spec, functions from the clients to sets of resources: arrays
of sets indexed by the clients' names.

Fairness, as the spec states it:

- ``SF_vars(\\E S \\in SUBSET Resources: Allocate(c, S))``: strong fairness of the set
  of every ``Allocate`` instance of client ``c``.
- ``WF_vars(Return(c, alloc[c]))`` (SimpleAllocator) or ``WF_vars(unsat[c] = {} /\\
  Return(c, alloc[c]))`` (SimpleAllocator2, the mutant ``weak-return``): weak fairness
  of returning *everything* held.  A fairness set names actions, and which ``Return``
  step returns everything depends on the state, so ``Return(c, S)`` is written as three
  actions with the same steps between them: ``ReturnPart(c, S)`` (S a proper subset of
  ``alloc[c]``), ``ReturnAll(c)`` when ``unsat[c] = {}`` and ``ReturnAllEarly(c)`` when
  not; the fair sets name the last two, or ``ReturnAll`` alone.
- The mutant ``weak-allocate`` (not in the spec) weakens the first to ``WF_vars``.

    osf-check explore --model-file tests/public_specs/allocator.py --depth unbounded
"""

import itertools

from osf_check import (And, Check, Enum, Goal, ModelBuilder, ModelSpec, Not, Or, Param,
                       Property, SetOf)


def _names(prefix, n):
    return [f"{prefix}{i + 1}" for i in range(n)]


def _subsets(n):
    """The non-empty subsets of ``0..n-1``, smallest first."""
    return [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)]


def build(params, mutant):
    nc, nr = params["clients"], params["resources"]
    clients, res = range(nc), Enum(*_names("r", nr))
    subsets = _subsets(nr)
    subset = Enum(*("{" + ",".join(res.names[i] for i in c) + "}" for c in subsets))
    client = Enum(*_names("c", nc))
    b = ModelBuilder("allocator", params, mutant, actors=("client", "allocator"))
    b.array("unsat", SetOf(res), client, actor="client")
    b.array("alloc", SetOf(res), client, actor="allocator")

    def available(s, r):
        return And(*(Not(s.alloc[c].contains(r)) for c in clients))

    labels = {"c": client, "S": subset}
    each = {"c": clients, "S": range(len(subsets))}

    @b.action("client", params=each, name="Request", labels=labels)
    def request(s, c, S):
        return (And(s.unsat[c].is_empty(), s.alloc[c].is_empty()),
                s.unsat[c].assign([r in subsets[S] for r in range(nr)]))

    @b.action("allocator", params=each, name="Allocate", labels=labels)
    def allocate(s, c, S):
        rs = subsets[S]
        return (And(*(And(available(s, r), s.unsat[c].contains(r)) for r in rs)),
                {**s.alloc[c].assign([Or(x, r in rs) for r, x in enumerate(s.alloc[c])]),
                 **s.unsat[c].assign([And(x, r not in rs) for r, x in enumerate(s.unsat[c])])})

    @b.action("client", params=each, name="ReturnPart", labels=labels)
    def return_part(s, c, S):
        rs, held = subsets[S], s.alloc[c]
        proper = Or(*(held.contains(r) for r in range(nr) if r not in rs))
        return (And(*(held.contains(r) for r in rs), proper),
                held.assign([And(x, r not in rs) for r, x in enumerate(held)]))

    @b.action("client", params={"c": clients}, name="ReturnAll", labels={"c": client})
    def return_all(s, c):
        return (And(Not(s.alloc[c].is_empty()), s.unsat[c].is_empty()),
                s.alloc[c].assign([False] * nr))

    @b.action("client", params={"c": clients}, name="ReturnAllEarly", labels={"c": client})
    def return_all_early(s, c):
        return (And(Not(s.alloc[c].is_empty()), Not(s.unsat[c].is_empty())),
                s.alloc[c].assign([False] * nr))

    for c in client.names:
        returns = [f"ReturnAll(c={c})"]
        if mutant != "weak-return":
            returns.append(f"ReturnAllEarly(c={c})")
        b.fairness("weak", returns, name=f"Return({c}, alloc[{c}])")
        b.fairness("weak" if mutant == "weak-allocate" else "strong",
                   [f"Allocate(c={c}, S={x})" for x in subset.names],
                   name=f"\\E S: Allocate({c}, S)")
    b.init(unsat={"#set": []}, alloc={"#set": []})
    return b.build()


SPEC = ModelSpec(
    name="allocator", title="Simple allocator (SimpleAllocator.tla)",
    params=(Param("clients", 2, 1, 3, "clients (Clients)"),
            Param("resources", 2, 1, 3, "resources (Resources)")),
    mutants={"weak-return": "SimpleAllocator2: a client need return what it holds only "
                            "once its whole request is granted",
             "weak-allocate": "weak instead of strong fairness of each client's "
                              "allocations: a client may wait for ever while another "
                              "takes and returns the resource it wants"},
    build_fn=build)


def _sets(s, m):
    return list(s.unsat), list(s.alloc)


def mutex(s, m):
    """ResourceMutex: no resource is allocated to two clients."""
    _, alloc = _sets(s, m)
    return And(*(Not(And(a.contains(r), b.contains(r)))
                 for i, a in enumerate(alloc) for b in alloc[i + 1:]
                 for r in range(m.params["resources"])))


def clients_will_return(s, m):
    """ClientsWillReturn: unsat[c] = {} ~> alloc[c] = {}."""
    unsat, alloc = _sets(s, m)
    return [Goal.leads_to(f"c{c + 1} returns", u.is_empty(), a.is_empty())
            for c, (u, a) in enumerate(zip(unsat, alloc))]


def clients_will_obtain(s, m):
    """ClientsWillObtain: r \\in unsat[c] ~> r \\in alloc[c]."""
    unsat, alloc = _sets(s, m)
    return [Goal.leads_to(f"c{c + 1} obtains r{r + 1}", u.contains(r), a.contains(r))
            for c, (u, a) in enumerate(zip(unsat, alloc))
            for r in range(m.params["resources"])]


def inf_often_satisfied(s, m):
    """InfOftenSatisfied: []<>(unsat[c] = {})."""
    unsat, _ = _sets(s, m)
    return [Goal.infinitely_often(f"c{c + 1} satisfied", u.is_empty())
            for c, u in enumerate(unsat)]


PROPERTIES = (
    Property("SA1", "resource-mutex", "allocator", mutex.__doc__, (Check("inv", mutex),), ()),
    Property("SA2", "clients-will-return", "allocator", clients_will_return.__doc__,
             (Check("fair", clients_will_return),), ()),
    Property("SA3", "clients-will-obtain", "allocator", clients_will_obtain.__doc__,
             (Check("fair", clients_will_obtain),), ()),
    Property("SA4", "inf-often-satisfied", "allocator", inf_often_satisfied.__doc__,
             (Check("fair", inf_often_satisfied),), ()),
)
