"""How long each translation of a tlaplus/Examples specification is, written with sets,
records and functions, against what it is compared with: its flat-array version, and the
TLA+ module it was written from.  A flat-array version is a file of the repository
(``tests/public_specs/flat/<name>.py``, written for the comparison) or the model file as
a commit of git history holds it, before it was restructured.

    python benchmarks/tlc/line_counts.py --examples ~/Examples

writes ``benchmarks/tlc/lines.json`` and the table between the markers of
``docs/tla-guide.md``.  Lines counted are lines of code: not blank, not only a comment,
not part of a docstring (Python) or a ``(* ... *)`` comment (TLA+).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import NamedTuple, NoReturn

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "public_specs"
LINES = Path(__file__).resolve().parent / "lines.json"
GUIDE = ROOT / "docs" / "tla-guide.md"
BEGIN, END = "<!-- line counts: begin -->", "<!-- line counts: end -->"



class Flat(NamedTuple):
    """Where a model file's flat-array version is: ``file``, a path in the repository, or
    ``commit``, a revision whose copy of the model file itself is flat."""

    file: str | None = None
    commit: str | None = None


def _flat_file(name: str) -> Flat:
    return Flat(file=f"tests/public_specs/flat/{name}.py")


# model file -> (the TLA+ module in tlaplus/Examples, its flat-array version or None)
TRANSLATIONS = {
    "allocator": ("specifications/allocator/SimpleAllocator.tla", Flat(commit="e06ea66^")),
    "chameneos": ("specifications/Chameneos/Chameneos.tla", Flat(commit="e06ea66^")),
    "diehard": ("specifications/DieHard/DieHard.tla", None),
    "dining": ("specifications/DiningPhilosophers/DiningPhilosophers.tla",
               _flat_file("dining")),
    "ewd840": ("specifications/ewd840/EWD840.tla", _flat_file("ewd840")),
    "missionaries": ("specifications/MissionariesAndCannibals/MissionariesAndCannibals.tla",
                     _flat_file("missionaries")),
    "parreach": ("specifications/MisraReachability/ParReach.tla", _flat_file("parreach")),
    "tcommit": ("specifications/transaction_commit/TCommit.tla", None),
    "token_ring": ("specifications/ewd426/TokenRing.tla", None),
    "twophase": ("specifications/transaction_commit/TwoPhase.tla", _flat_file("twophase")),
}


def python_lines(source: str) -> int:
    """Lines holding a token of code, docstrings and comments left out."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, (body[0].end_lineno or 0) + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code - docstrings)


def tla_lines(source: str) -> int:
    """Lines left with text once (* ... *) comments (they nest) and \\* comments go."""
    out, depth, i = [], 0, 0
    while i < len(source):
        two = source[i:i + 2]
        if two == "(*":
            depth, i = depth + 1, i + 2
        elif two == "*)" and depth:
            depth, i = depth - 1, i + 2
        else:
            if not depth or source[i] == "\n":
                out.append(source[i])
            i += 1
    text = re.sub(r"\\\*.*", "", "".join(out))
    return sum(1 for line in text.splitlines() if line.strip())


def git(*args: str, repo: Path = ROOT) -> str:
    """What a git command prints in ``repo``."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def flat_entry(name: str, flat: Flat) -> dict:
    """The flat-array version's lines, and where they were read."""
    if flat.file is not None:
        return {"flat_file": flat.file, "flat": python_lines((ROOT / flat.file).read_text())}
    rev = git("rev-parse", "--short", str(flat.commit)).strip()
    return {"flat_commit": rev,
            "flat": python_lines(git("show", f"{rev}:tests/public_specs/{name}.py"))}


def shorter_by(translation: int, flat: int) -> float:
    """How much shorter the translation is than its flat version, in per cent of the flat
    version (negative: longer)."""
    return round(100 * (flat - translation) / flat, 1)


def measure(examples: Path) -> dict:
    """Every translation's lines, its flat version's and its TLA+ module's (read in
    ``examples``, a checkout of tlaplus/Examples)."""
    models = {}
    for name, (tla, flat) in TRANSLATIONS.items():
        entry = {"translation": python_lines((SPECS / f"{name}.py").read_text()),
                 "tla_module": tla, "tla": tla_lines((examples / tla).read_text())}
        if flat is not None:
            entry.update(flat_entry(name, flat))
            entry["shorter_pct"] = shorter_by(entry["translation"], entry["flat"])
        models[name] = entry
    return {"examples_commit": git("rev-parse", "HEAD", repo=examples).strip(),
            "models": models}


def versus(translation: int, flat: int) -> str:
    """How the translation compares with its flat version, as the table says it."""
    if translation == flat:
        return "same length"
    pct = shorter_by(translation, flat)
    return f"{abs(pct):.1f} % {'shorter' if translation < flat else 'longer'}"


def table(doc: dict) -> str:
    """The guide's table of ``doc`` (what :func:`measure` returns), then its summary.
    Models are named as their files in ``tests/public_specs/`` (the guide's prose says
    where), in plain text: five narrow columns read on a page where seven with paths
    wrapped inside every name."""
    rows = ["| model | lines | flat-array version: lines (where) | structured against flat "
            "| TLA+ module: lines |",
            "| --- | --- | --- | --- | --- |"]
    for name, m in doc["models"].items():
        if "flat" in m:
            where = (m["flat_file"].removeprefix("tests/public_specs/") if "flat_file" in m
                     else f"commit {m['flat_commit']}")
            flat = f"{m['flat']} ({where}) | {versus(m['translation'], m['flat'])}"
        else:
            flat = "none |"
        rows.append(f"| {name} | {m['translation']} | {flat} | "
                    f"{Path(m['tla_module']).name}: {m['tla']} |")
    return "\n".join(rows) + "\n\n" + summary(doc)


def summary(doc: dict) -> str:
    """One sentence: how many translations are shorter than their flat versions, and by
    how much all of them together are."""
    pairs = [(m["translation"], m["flat"]) for m in doc["models"].values() if "flat" in m]
    if not pairs:
        return "No model file has a flat-array version."
    ours, flat = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    shorter, longer = sum(a < f for a, f in pairs), sum(a > f for a, f in pairs)
    return (f"Of the {len(pairs)} model files with a flat-array version, shorter than it: "
            f"{shorter}, longer: {longer}, the same length: {len(pairs) - shorter - longer}; "
            f"together {ours} lines against {flat} ({versus(ours, flat)}).")


def guide_with(text: str, doc: dict) -> str:
    """``text`` (the guide) with the table of ``doc`` between its markers."""
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table(doc)}\n{END}{tail}"


def refuse(message: str) -> NoReturn:
    """Bad input: one line and exit 150."""
    print(f"line_counts: {message}", file=sys.stderr)
    sys.exit(150)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.error = refuse  # type: ignore[method-assign]
    ap.add_argument("--examples", required=True, type=Path,
                    help="a checkout of tlaplus/Examples")
    a = ap.parse_args(argv)
    if not (a.examples / "specifications").is_dir() or \
            not (a.examples / ".git").exists():
        refuse(f"{a.examples}: not a git checkout of tlaplus/Examples")
    doc = measure(a.examples)
    LINES.write_text(json.dumps(doc, indent=1) + "\n")
    GUIDE.write_text(guide_with(GUIDE.read_text(), doc))


if __name__ == "__main__":
    main()
