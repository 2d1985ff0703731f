"""The explicit interpretation of the DSL: expressions compiled to Python source.

Each action instance becomes one function ``step(s) -> successor tuple | None``,
generated as source text and compiled once, so that the BFS loop calls plain
Python code with no tree walking.  Sub-expressions shared between updates are
computed once (hoisted into locals).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from osf_check.models.dsl import ActionInstance, Model, ModelError
from osf_check.models.expr import BOOL_OPS, Expr

__all__ = ["py_source", "compile_steps", "compile_pred", "compile_trans", "compile_pack",
           "compile_unpack", "Step"]

Step = Callable[[tuple], "tuple | None"]

_BIN = {"add": "+", "sub": "-", "mul": "*", "div": "//", "mod": "%", "eq": "==", "ne": "!=",
        "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def py_source(e: Expr, names: dict[int, str] | None = None) -> str:
    """Python source for ``e``; current state is ``s``, next state ``t``.

    >>> from osf_check.models.expr import Slot, If, And
    >>> py_source(If(And(Slot(0) == 1, Slot(1, 1) > 2), Slot(2), 0))
    '(s[2] if ((s[0] == 1) and (t[1] > 2)) else 0)'
    """
    names = names or {}

    def truth(x: Expr) -> str:
        # Python's `2 and 3` is 3, numpy's and z3's And of them true (1): a number
        # taken as a truth value is made one first
        return go(x) if x.op in BOOL_OPS else f"({go(x)} != 0)"

    def go(x: Expr) -> str:
        n = names.get(id(x))
        if n is not None:
            return n
        op = x.op
        if op == "const":
            return repr(x.value)
        if op == "true":
            return "True"
        if op == "false":
            return "False"
        if op == "slot":
            i, which = x.value
            return f"{'t' if which else 's'}[{i}]"
        a = x.args
        if op in _BIN:
            return f"({go(a[0])} {_BIN[op]} {go(a[1])})"
        if op == "and":
            return "(" + " and ".join(truth(y) for y in a) + ")"
        if op == "or":
            return "(" + " or ".join(truth(y) for y in a) + ")"
        if op == "not":
            return f"(not {go(a[0])})"
        if op == "implies":
            return f"((not {go(a[0])}) or {truth(a[1])})"
        if op == "ite":
            return f"({go(a[1])} if {go(a[0])} else {go(a[2])})"
        if op == "select":  # only the option picked is computed, after its index's check
            opts = [go(y) for y in a[1:]]
            chain = f"({opts[-1]})"
            for j in range(len(opts) - 2, 0, -1):
                chain = f"(({opts[j]}) if _i == {j} else {chain})"
            if len(opts) == 1:
                return f"(_ix({go(a[0])}, 1), {opts[0]})[1]"
            return f"(({opts[0]}) if (_i := _ix({go(a[0])}, {len(opts)})) == 0 else {chain})"
        raise ModelError(f"unknown operator {op}")

    return go(e)


def _shared(exprs: Sequence[Expr]) -> list[Expr]:
    """Non-leaf nodes reachable more than once from ``exprs``, children first."""
    count: dict[int, int] = {}
    order: list[Expr] = []

    def walk(x: Expr) -> None:
        if x.op in ("const", "true", "false", "slot"):
            return
        k = id(x)
        count[k] = count.get(k, 0) + 1
        if count[k] == 1:
            for y in x.args:
                walk(y)
            order.append(x)

    for e in exprs:
        walk(e)
    # (a node that reads an array at a computed index is left where it is: computed
    # ahead, it would check an index in states where no branch reads it)
    return [x for x in order if count[id(x)] > 1 and not x.selects]


def _ix(i: int, m: int) -> int:
    """A Select's index, checked (an array read at a computed index is one)."""
    if 0 <= i < m:
        return i
    raise ModelError(f"an array read or Select at index {i}, outside 0..{m - 1}")


def _exec(src: str, name: str) -> Any:
    env: dict[str, Any] = {"_ix": _ix}
    exec(compile(src, f"<osf-check:{name}>", "exec"), env)  # noqa: S102 - our own generated code
    return env[name]


def _needs_check(e: Expr, d: Any, doms: Sequence[Any]) -> bool:
    """Whether an update's value must be checked against its domain ``d`` when the
    action fires: not a constant inside it, nor a copy of a variable of that domain
    (a constant outside it errs whenever the action fires, as in the vector engine)."""
    if e.op == "const":
        return e.value not in d
    return not (e.op == "slot" and doms[e.value[0]] is d)


def step_source(inst: ActionInstance, model: Model, fname: str = "step") -> str:
    n = model.nslots
    upd = inst.updates
    doms = model.slot_domains
    shared = _shared(list(upd.values()))
    names: dict[int, str] = {}
    lines = [f"def {fname}(s):", f"    if not {py_source(inst.guard)}:", "        return None"]
    for k, x in enumerate(shared):
        src = py_source(x, names)
        names[id(x)] = f"_h{k}"
        lines.append(f"    _h{k} = {src}")
    vals = []
    for i in range(n):
        if i in upd:
            src = py_source(upd[i], names)
            # truth values are stored as 0/1, never as Python bools
            lines.append(f"    v{i} = int({src})" if upd[i].op in BOOL_OPS else f"    v{i} = {src}")
            d = doms[i]
            if _needs_check(upd[i], d, doms):
                lines.append(f"    if not {d.lo} <= v{i} <= {d.hi}:")
                lines.append(f"        raise _DomainError({i}, v{i})")
            vals.append(f"v{i}")
        else:
            vals.append(f"s[{i}]")
    lines.append(f"    return ({', '.join(vals)},)")
    return "\n".join(lines) + "\n"


def compile_steps(model: Model) -> list[Step]:
    """All action instances in canonical order; domain errors name the action."""
    out = []
    for inst in model.instances:
        src = step_source(inst, model)
        env: dict[str, Any] = {"_DomainError": _named_domain_error(model, inst), "_ix": _ix}
        exec(compile(src, f"<osf-check:{inst.label}>", "exec"), env)  # noqa: S102
        out.append(env["step"])
    return out


def _named_domain_error(model: Model, inst: ActionInstance) -> Callable[[int, int], ModelError]:
    def make(slot: int, value: int) -> ModelError:
        return ModelError(f"action {inst.label} sets {model.slot_names[slot]} to {value}, outside "
                          f"its domain {model.slot_domains[slot]}: widen the domain or strengthen "
                          f"the guard")
    return make


def compile_pred(e: Expr, name: str = "pred") -> Callable[[tuple], bool]:
    """A state predicate ``f(s)``."""
    return _exec(f"def {name}(s):\n    return {py_source(e)}\n", name)


def compile_trans(e: Expr, name: str = "trans") -> Callable[[tuple, tuple], bool]:
    """A transition predicate ``f(s, t)`` over the current and the next state."""
    return _exec(f"def {name}(s, t):\n    return {py_source(e)}\n", name)


def compile_pack(model: Model) -> Callable[[tuple], int]:
    """Pack a state into one integer using the fewest bits each domain needs."""
    parts, off = [], 0
    for i, d in enumerate(model.slot_domains):
        if d.bits == 0:
            continue
        v = f"s[{i}]" if d.lo == 0 else f"(s[{i}] - {d.lo})"
        parts.append(v if off == 0 else f"({v} << {off})")
        off += d.bits
    body = " | ".join(parts) or "0"
    return _exec(f"def pack(s):\n    return {body}\n", "pack")


def compile_unpack(model: Model) -> Callable[[int], tuple]:
    parts, off = [], 0
    for d in model.slot_domains:
        if d.bits == 0:
            parts.append(str(d.lo))
            continue
        mask = (1 << d.bits) - 1
        parts.append(f"(((p >> {off}) & {mask}) + {d.lo})" if d.lo else f"((p >> {off}) & {mask})")
        off += d.bits
    return _exec(f"def unpack(p):\n    return ({', '.join(parts)},)\n", "unpack")


def level_source(model: Model, trans_insts: set[int], keep_graph: bool,
                 reduced: bool = False) -> str:
    """Source of ``expand_level``: one BFS level with every action instance inlined.

    A successor's packed key is computed from its parent's key and the changed slots
    only; the successor tuple is built only when the key is new (or when a transition
    check needs it), which is what makes duplicates cheap.
    """
    doms = model.slot_domains
    offs, off = [], 0
    for d in doms:
        offs.append(off)
        off += d.bits
    lines = [
        "def expand_level(current, ids, add_new, fired, on_trans, esrc, edst, eact, limit,",
        "                 packed, tick, on_stuck):",
        "    gen = 0",
        "    for sid, s, ps in current:",
        "        en = 0",
    ]
    n = model.nslots
    for inst in model.instances:
        ai = inst.index
        upd = {i: e for i, e in inst.updates.items()
               if not (e.op == "slot" and e.value == (i, 0))}
        lines.append(f"        if {py_source(inst.guard)}:")
        ind = "            "
        lines.append(f"{ind}en = 1")
        lines.append(f"{ind}gen += 1")
        lines.append(f"{ind}fired[{ai}] += 1")
        shared = _shared(list(upd.values()))
        names: dict[int, str] = {}
        for k, x in enumerate(shared):
            src = py_source(x, names)
            names[id(x)] = f"_h{k}"
            lines.append(f"{ind}_h{k} = {src}")
        clear = 0
        parts = []
        for i, e in sorted(upd.items()):
            src = py_source(e, names)
            lines.append(f"{ind}v{i} = int({src})" if e.op in BOOL_OPS else f"{ind}v{i} = {src}")
            d = doms[i]
            if _needs_check(e, d, doms):
                lines.append(f"{ind}if not {d.lo} <= v{i} <= {d.hi}:")
                lines.append(f"{ind}    raise _DomainError({i}, v{i}, {ai})")
            if d.bits:
                clear |= ((1 << d.bits) - 1) << offs[i]
                v = f"v{i}" if d.lo == 0 else f"(v{i} - {d.lo})"
                parts.append(f"({v} << {offs[i]})" if offs[i] else v)
        key = f"(ps & {~clear})" if clear else "ps"
        if parts:
            key += " | " + " | ".join(parts)
        tup = "(" + ", ".join(f"v{i}" if i in upd else f"s[{i}]" for i in range(n)) + ",)"
        if reduced:
            lines.append(f"{ind}t = {tup}")
            lines.append(f"{ind}u = canon(t)")
            lines.append(f"{ind}k = pack(u)")
            lines.append(f"{ind}tid = ids.get(k)")
            lines.append(f"{ind}if tid is None:")
            lines.append(f"{ind}    tid = add_new(u, k, sid, {ai})")
            if ai in trans_insts:
                lines.append(f"{ind}on_trans({ai}, sid, s, t)")
        elif ai in trans_insts:
            lines.append(f"{ind}k = {key}")
            lines.append(f"{ind}t = {tup}")
            lines.append(f"{ind}tid = ids.get(k)")
            lines.append(f"{ind}if tid is None:")
            lines.append(f"{ind}    tid = add_new(t, k, sid, {ai})")
            lines.append(f"{ind}on_trans({ai}, sid, s, t)")
        else:
            lines.append(f"{ind}k = {key}")
            lines.append(f"{ind}tid = ids.get(k)")
            lines.append(f"{ind}if tid is None:")
            lines.append(f"{ind}    tid = add_new({tup}, k, sid, {ai})")
        if keep_graph:
            lines.append(f"{ind}esrc.append(sid)")
            lines.append(f"{ind}edst.append(tid)")
            lines.append(f"{ind}eact.append({ai})")
    lines += [
        "        if not en:",
        "            on_stuck(sid, s)",
        "        if len(packed) >= limit:",
        "            return gen, sid",
        "        if not sid & 1023:",
        "            tick(sid)",
        "    return gen, -1",
    ]
    return "\n".join(lines) + "\n"


def compile_level(model: Model, trans_insts: set[int], keep_graph: bool,
                  canon: Callable[[tuple], tuple] | None = None) -> Callable[..., Any]:
    src = level_source(model, trans_insts, keep_graph, reduced=canon is not None)
    names = model.slot_names

    class _DomainError(Exception):
        pass

    env: dict[str, Any] = {"_DomainError": _DomainError, "canon": canon,
                           "pack": compile_pack(model), "_ix": _ix}
    exec(compile(src, f"<osf-check:{model.name}:level>", "exec"), env)  # noqa: S102
    fn = env["expand_level"]

    def expand_level(*args: Any) -> Any:
        try:
            return fn(*args)
        except _DomainError as e:
            slot, value, ai = e.args
            inst = model.instances[ai].label
            raise ModelError(f"action {inst} sets {names[slot]} to {value}, outside its domain "
                             f"{model.slot_domains[slot]}: widen the domain or strengthen the "
                             f"guard") from None
    return expand_level

