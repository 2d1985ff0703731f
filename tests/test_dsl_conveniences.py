"""What a new user of the DSL reaches for when translating a TLA+ spec (ParReach.tla was
the first): an enum as a parameter's values, an enum that lists its values, enum values
by number in initial states, ``[]`` as the empty set in an array of sets, and fairness
of one process's whole step.  Each test failed before the convenience it names."""

from __future__ import annotations

import runpy
import textwrap

import pytest

import osf_check
from osf_check.models.dsl import Bool, Enum, Int, ModelBuilder, ModelError, Not
from osf_check.models.expr import ForAll, evaluate
from osf_check.models.structured import SetOf

Procs = Enum("p1", "p2")
Nodes = Enum("n1", "n2", "n3")


def _procs(params, labels=None):
    """A model of two processes whose one action is over ``params``."""
    b = ModelBuilder("procs")
    b.array("done", Bool(), Procs, actor="p")

    @b.action("p", params=params, labels=labels)
    def step(s, self):
        return Not(s.done[self]), {s.done[self]: True}

    b.init(done=False)
    return b.build()


# 1. a domain as a parameter's values ------------------------------------------------

def test_an_enum_gives_a_parameter_its_values_and_its_instances_their_names():
    m = _procs({"self": Procs})
    assert [i.label for i in m.instances] == ["step(self=p1)", "step(self=p2)"]
    assert [i.args for i in m.instances] == [{"self": 0}, {"self": 1}]


def test_an_enum_parameter_is_the_model_written_with_a_range_and_labels():
    by_hand = _procs({"self": range(Procs.size)}, {"self": Procs})
    assert _procs({"self": Procs}).fingerprint() == by_hand.fingerprint()
    unnamed = _procs({"self": range(Procs.size)})  # (labels differ: so do fingerprints)
    assert unnamed.fingerprint() != by_hand.fingerprint()


def test_labels_still_override_the_parameters_domain():
    m = _procs({"self": Procs}, {"self": Enum("left", "right")})
    assert [i.label for i in m.instances] == ["step(self=left)", "step(self=right)"]


def test_an_int_domain_parameter_shows_its_numbers():
    b = ModelBuilder("ints")
    b.var("x", Int(-1, 1), actor="p")

    @b.action("p", params={"v": Int(-1, 1)})
    def put(s, v):
        return s.x != v, {s.x: v}

    b.init(x=0)
    assert [i.label for i in b.build().instances] == ["put(v=-1)", "put(v=0)", "put(v=1)"]


# 2. an enum lists its values ---------------------------------------------------------

def test_an_enum_iterates_its_values_in_order_and_has_a_length():
    assert list(Nodes) == [Nodes.n1, Nodes.n2, Nodes.n3] == [0, 1, 2]
    assert len(Nodes) == Nodes.size == len(Nodes.names) == 3
    assert [Nodes.show(v) for v in Nodes] == list(Nodes.names)
    assert list(Int(2, 4)) == [2, 3, 4] and len(Int(2, 4)) == 3
    assert list(Bool()) == [0, 1]


def test_a_domain_still_reads_as_a_domain_where_one_is_expected():
    """Quantifiers, array indices and init_all's "every value" took a domain before it
    was iterable: each still reads it as a domain, not as a list of its values."""
    assert evaluate(ForAll(Nodes, lambda n: n < 3), ()) == 1
    b = ModelBuilder("d")
    b.array("a", Bool(), Nodes, actor="p")
    b.set("s", Procs, actor="p")
    b.init_all(a=Bool(), s=Bool())
    m = b.build()
    assert m.slot_names[:3] == ["a[n1]", "a[n2]", "a[n3]"]
    assert len(m.initial_states) == 2 ** 5  # hand count: 3 + 2 free bits


# 3. enum values by number (or name) in initial states ---------------------------------

def _one_init(**values):
    b = ModelBuilder("init")
    b.set("vroot", Nodes, actor="p")
    b.var("pc", Enum("a", "b"), actor="p")
    b.array("u", Nodes, 2, actor="p")
    b.var("m", SetOf(Nodes), actor="p")
    b.array("to", SetOf(Nodes), Procs, actor="p")
    b.init(**{"vroot": [], "pc": 0, "u": 0, "m": [], "to": {"#set": []}, **values})
    m = b.build()
    return m.show_state(m.initial_states[0])


def test_an_element_alone_is_refused_where_a_set_is_meant():
    """An enum's value is a number, and a number once set every bit of a set variable:
    ``vroot=Nodes.n1`` silently meant every node.  Now it is refused with what to write;
    True and False still mean every element and none."""
    for bare in (Nodes.n1, Nodes.n2, 0):
        with pytest.raises(ModelError, match=r"is not a set of .*write \['n\d'\] for the set"):
            _one_init(vroot=bare)
    with pytest.raises(ModelError, match="write \\[\\] for the empty set"):
        _one_init(vroot=9)
    assert _one_init(vroot=True)["vroot"] == {"#set": ["n1", "n2", "n3"]}
    assert _one_init(vroot=False)["vroot"] == {"#set": []}
    assert _one_init(vroot=[Nodes.n2])["vroot"] == {"#set": ["n2"]}


def test_a_set_takes_an_enums_values_by_number_or_by_name():
    shown = {"#set": ["n1", "n3"]}
    assert _one_init(vroot=[Nodes.n1, "n3"])["vroot"] == shown
    assert _one_init(vroot={"#set": [Nodes.n1, Nodes.n3]})["vroot"] == shown
    assert _one_init(vroot={Nodes.n3, Nodes.n1})["vroot"] == shown
    assert _one_init(m=[Nodes.n1, "n3"])["m"] == shown


def test_a_plain_enum_variable_and_array_take_names_as_well_as_numbers():
    got = _one_init(pc="b", u=["n3", Nodes.n2])
    assert (got["pc"], got["u"]) == ("b", ["n3", "n2"])
    assert _one_init(pc=1, u=2)["u"] == ["n3", "n3"]


def test_a_map_of_an_initial_value_takes_its_keys_by_number():
    got = _one_init(to={"#map": [[Procs.p1, ["n2"]], ["p2", []]]})["to"]
    assert got == {"#map": [["p1", {"#set": ["n2"]}], ["p2", {"#set": []}]]}


@pytest.mark.parametrize("values,says", [
    ({"vroot": [3]}, "initial value of vroot: expected one of n1, n2, n3 (or 0..2), got 3"),
    ({"vroot": ["n9"]}, "initial value of vroot: expected one of n1, n2, n3, got 'n9'"),
    ({"vroot": [True]}, "expected one of n1, n2, n3, got True"),
    ({"vroot": "n1"}, "initial value of vroot: expected a set"),
    ({"pc": "c"}, "initial value of pc: expected one of a, b, got 'c'"),
])
def test_a_foreign_initial_value_is_a_model_error_that_says_so(values, says):
    with pytest.raises(ModelError) as err:
        _one_init(**values)
    assert says in str(err.value)


# 4. the empty set in an array of sets -------------------------------------------------

@pytest.mark.parametrize("empty", [[], set(), frozenset(), (), {"#set": []}])
def test_an_empty_collection_is_the_empty_set_for_every_element(empty):
    assert _one_init(to=empty)["to"] == {"#map": [["p1", {"#set": []}], ["p2", {"#set": []}]]}


def test_a_list_of_elements_is_one_set_for_every_element_and_a_list_of_lists_one_each():
    both = {"#set": ["n1", "n2"]}
    assert _one_init(to=["n1", Nodes.n2])["to"] == {"#map": [["p1", both], ["p2", both]]}
    got = _one_init(to=[[], ["n2"]])["to"]
    assert got == {"#map": [["p1", {"#set": []}], ["p2", {"#set": ["n2"]}]]}


def test_a_two_dimensional_array_of_sets_takes_the_empty_list_too():
    b = ModelBuilder("grid")
    b.array("g", SetOf(Nodes), (Procs, 2), actor="p")
    b.init(g=[])
    m = b.build()
    assert m.initial_states == [(0,) * (2 * 2 * 3)]


def test_a_list_mixing_elements_and_sets_says_what_to_write():
    with pytest.raises(ModelError) as err:
        _one_init(to=[[], "n1"])
    assert ("an array of sets takes one set for every element, as a list of elements "
            "([] for the empty set), or a list of 2 sets") in str(err.value)


# 5. fairness of each process's whole step ---------------------------------------------

MODEL = """
from osf_check import Check, Enum, Goal, Int, ModelBuilder, ModelSpec, Property

Procs = Enum("p1", "p2")


def build(params, mutant):
    b = ModelBuilder("cycle", params, mutant, actors=("p",))
    b.array("pc", Int(0, 1), Procs, actor="p")

    @b.action("p", params={"self": Procs})
    def a(s, self):
        return s.pc[self] == 0, {s.pc[self]: 1}

    @b.action("p", params={"self": Procs})
    def c(s, self):
        return s.pc[self] == 1, {s.pc[self]: 0}

    if mutant is None:  # \\A self \\in Procs : WF_vars(p(self))
        b.fairness("weak", ["a", "c"], name="p", each="self")
    elif mutant == "labels":
        for p in Procs.names:
            b.fairness("weak", [f"a(self={p})", f"c(self={p})"], name=f"p({p})")
    elif mutant == "where":
        for p in Procs.names:
            b.fairness("weak", ["a", "c"], where={"self": p})
    elif mutant == "where-p1":
        b.fairness("weak", ["a", "c"], where={"self": Procs.p1})
    elif mutant == "one-set":  # WF_vars(\\E self \\in Procs : p(self))
        b.fairness("weak", ["a", "c"])
    b.init(pc=0)
    return b.build()


def p2_moves(s, m):
    return [Goal.eventually("p2 moves", s.pc[Procs.p2] == 1)]


SPEC = ModelSpec(name="cycle", title="two cycling processes", params=(), build_fn=build,
                 mutants={"labels": "", "where": "", "where-p1": "", "one-set": ""})
PROPERTIES = (Property("C1", "p2-moves", "cycle", "p2 eventually moves.",
                       (Check("fair", p2_moves),), ()),)
"""


@pytest.fixture(scope="module")
def cycle(tmp_path_factory):
    path = tmp_path_factory.mktemp("cycle") / "cycle.py"
    path.write_text(textwrap.dedent(MODEL))
    return path


def _verdict(path, mutant):
    r = osf_check.Checker(path).mutant(mutant).depth(None).keep_going().explore()
    assert r.distinct == 4  # hand count: pc is 0 or 1 for each of two processes
    return r.status["C1"]


def test_each_value_of_a_parameter_is_one_fairness_set_as_the_hand_listed_labels(cycle):
    spec = runpy.run_path(str(cycle))["SPEC"]
    each, labels = spec.build({}), spec.build({}, "labels")
    where = spec.build({}, "where")

    def sets(m):
        return [(f.kind, sorted(m.instances[i].label for i in f.instances))
                for f in m.fairness]
    assert sets(each) == sets(labels) == sets(where) == [
        ("weak", ["a(self=p1)", "c(self=p1)"]), ("weak", ["a(self=p2)", "c(self=p2)"])]
    assert [f.name for f in each.fairness] == ["p(self=p1)", "p(self=p2)"]
    assert [f.name for f in where.fairness] == ["a \\/ c (self=p1)", "a \\/ c (self=p2)"]


@pytest.mark.parametrize("mutant,verdict", [
    (None, "holds"), ("labels", "holds"), ("where", "holds"),
    # hand count: p1 cycling forever is fair to p1 alone, and to the one set of both
    ("where-p1", "violated"), ("one-set", "violated")])
def test_fairness_of_each_process_gives_the_verdict_of_the_hand_listed_labels(
        cycle, mutant, verdict):
    assert _verdict(cycle, mutant) == verdict


def test_a_fairness_selection_naming_nothing_is_a_model_error():
    b = ModelBuilder("procs")
    b.array("done", Bool(), Procs, actor="p")

    @b.action("p", params={"self": Procs})
    def step(s, self):
        return Not(s.done[self]), {s.done[self]: True}

    @b.action("p")
    def idle(s):
        return True, {}

    b.init(done=False)
    for kw, says in [({"where": {"self": "p3"}}, "no instance of step has self='p3'"),
                     ({"each": "who"}, "action step has no parameter 'who'")]:
        b._fairness.clear()
        b.fairness("weak", ["step"], **kw)
        with pytest.raises(ModelError, match=says.replace("(", r"\(")):
            b.build()
    b._fairness.clear()
    b.fairness("weak", ["step", "idle"], each="self")
    with pytest.raises(ModelError, match="action idle has no parameter 'self'"):
        b.build()


# 6. a constant function to sets, read at an index the state computes ------------------

SUCC = {"n1": ["n2", "n3"], "n2": ["n3"], "n3": []}


def test_a_set_table_read_at_a_state_dependent_index_is_the_set_there():
    from osf_check.models.expr import Exists, Slot
    from osf_check.models.structured import SetTable
    succ = SetTable(Nodes, Nodes, SUCC)
    at = succ[Slot(0)]
    for u in Nodes:
        want = {Nodes.read(n) for n in SUCC[Nodes.show(u)]}
        assert [evaluate(b, (u,)) for b in at] == [int(n in want) for n in Nodes]
        assert evaluate(at.card(), (u,)) == len(want)
        assert evaluate(Exists(at, lambda n: n == Nodes.n3), (u,)) == int(Nodes.n3 in want)
    assert [evaluate(b, ()) for b in succ[Nodes.n2]] == [0, 0, 1]


def test_a_set_table_is_read_only_and_checks_its_keys_and_elements():
    from osf_check.models.structured import SetTable
    with pytest.raises(ModelError, match="SetTable: the set at n4: expected one of n1"):
        SetTable(Nodes, Nodes, {"n4": []})
    succ = SetTable(Nodes, Nodes, SUCC)
    b = ModelBuilder("ro")
    u = b.var("u", Nodes, actor="p")

    @b.action("p")
    def write(s):
        return True, succ[u].add("n1")

    b.init(u=0)
    with pytest.raises(ModelError, match="is not a state variable"):
        b.build()
