"""How long each translation of a tlaplus/Examples specification is, written with sets,
records and functions, against what it is compared with: its flat-array version where git
history holds one, else the TLA+ module it was written from.

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

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "public_specs"
LINES = Path(__file__).resolve().parent / "lines.json"
GUIDE = ROOT / "docs" / "tla-guide.md"
BEGIN, END = "<!-- line counts: begin -->", "<!-- line counts: end -->"

# model file -> (the TLA+ module in tlaplus/Examples, the last commit with a flat version)
TRANSLATIONS = {
    "allocator": ("specifications/allocator/SimpleAllocator.tla", "e06ea66^"),
    "chameneos": ("specifications/Chameneos/Chameneos.tla", "e06ea66^"),
    "diehard": ("specifications/DieHard/DieHard.tla", None),
    "dining": ("specifications/DiningPhilosophers/DiningPhilosophers.tla", None),
    "ewd840": ("specifications/ewd840/EWD840.tla", None),
    "missionaries": ("specifications/MissionariesAndCannibals/MissionariesAndCannibals.tla",
                     None),
    "tcommit": ("specifications/transaction_commit/TCommit.tla", None),
    "token_ring": ("specifications/ewd426/TokenRing.tla", None),
    "twophase": ("specifications/transaction_commit/TwoPhase.tla", None),
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


def git_show(rev: str, path: str) -> str:
    p = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                       capture_output=True, text=True, check=True)
    return p.stdout


def measure(examples: Path) -> dict:
    commit = subprocess.run(["git", "-C", str(examples), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    models = {}
    for name, (tla, flat_rev) in TRANSLATIONS.items():
        path = f"tests/public_specs/{name}.py"
        entry = {"translation": python_lines((SPECS / f"{name}.py").read_text()),
                 "tla_module": tla, "tla": tla_lines((examples / tla).read_text())}
        if flat_rev:
            rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", flat_rev],
                                 capture_output=True, text=True, check=True).stdout.strip()
            entry["flat_commit"] = rev
            entry["flat"] = python_lines(git_show(rev, path))
        models[name] = entry
    return {"examples_commit": commit, "models": models}


def table(doc: dict) -> str:
    rows = ["| model file | lines | flat-array version (commit) | TLA+ module | lines |",
            "| --- | --- | --- | --- | --- |"]
    for name, m in doc["models"].items():
        flat = f"{m['flat']} ({m['flat_commit']})" if "flat" in m else "none"
        rows.append(f"| `tests/public_specs/{name}.py` | {m['translation']} | {flat} | "
                    f"`{Path(m['tla_module']).name}` | {m['tla']} |")
    return "\n".join(rows)


def guide_with(text: str, doc: dict) -> str:
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table(doc)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", required=True, type=Path,
                    help="a checkout of tlaplus/Examples")
    a = ap.parse_args(argv)
    if not (a.examples / "specifications").is_dir():
        sys.exit(f"{a.examples}: not a tlaplus/Examples checkout")
    doc = measure(a.examples)
    LINES.write_text(json.dumps(doc, indent=1) + "\n")
    GUIDE.write_text(guide_with(GUIDE.read_text(), doc))


if __name__ == "__main__":
    main()
