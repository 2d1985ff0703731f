"""The rule counts of ``docs/conformance.md``, computed from its two tables.

    python scripts/conformance_counts.py           # print the counts sentence
    python scripts/conformance_counts.py --write   # write it into the page and the README

The page's "Rules by status:" line and the README's map row both carry the sentence;
``tests/test_conformance_doc.py`` fails when either differs from the tables.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "conformance.md"
README = ROOT / "README.md"
#: in the order the sentence gives them; a status cell starts with one of these
ORDER = ("followed", "followed, untested", "partly", "different", "missing",
         "not applicable")
ROW = re.compile(r"\| ([GW]\d+[a-z]?) \|")
#: the sentence as it stands in each file, to be replaced whole
IN_PAGE = re.compile(r"Rules by status: 000: [^\n]*?\.$", re.M)
IN_README = re.compile(r"\(000: \d+ rules, [^)]*\)")
#: how a status reads in the sentence, where its own comma would be ambiguous
LABEL = {"followed, untested": "followed but untested"}


def rows(doc: str) -> list[dict[str, str]]:
    """Each rule row of the 000 and 004 tables, with the document it belongs to."""
    out, part = [], None
    for line in doc.splitlines():
        if line.startswith("## "):
            part = line[3:6] if line[3:6] in ("000", "004") else None
        elif part and ROW.match(line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 6:
                raise ValueError(f"{cells[0]}: {len(cells)} cells, not 6")
            rid, section, rule, status, code, tests = cells
            out.append({"doc": part, "id": rid, "section": section, "rule": rule,
                        "status": status, "code": code, "tests": tests})
    return out


def status_of(row: dict[str, str]) -> str:
    """The row's status word; the longest match, so "followed, untested" is not "followed"."""
    found = [s for s in ORDER if row["status"].startswith(s)]
    if not found:
        raise ValueError(f"{row['id']}: unknown status {row['status'][:40]!r}")
    return max(found, key=len)


def counts_sentence(doc: str) -> str:
    """How many rows of each document's table have each status, as a sentence."""
    counts: dict[str, dict[str, int]] = {}
    for r in rows(doc):
        per = counts.setdefault(r["doc"], {})
        per[status_of(r)] = per.get(status_of(r), 0) + 1
    return "; ".join(
        f"{d}: {sum(c.values())} rules, " + ", ".join(f"{c[k]} {LABEL.get(k, k)}" for k in ORDER if k in c)
        for d, c in counts.items())


def write() -> None:
    page = PAGE.read_text(encoding="utf-8")
    want = counts_sentence(page)
    readme = README.read_text(encoding="utf-8")
    if not IN_PAGE.search(page) or not IN_README.search(readme):
        raise ValueError("no counts sentence to replace in the page or the README")
    PAGE.write_text(IN_PAGE.sub(lambda _: f"Rules by status: {want}.", page, count=1),
                    encoding="utf-8")
    README.write_text(IN_README.sub(lambda _: f"({want})", readme, count=1), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the sentence into both files")
    args = ap.parse_args(argv)
    try:
        if args.write:
            write()
        print(counts_sentence(PAGE.read_text(encoding="utf-8")))
    except ValueError as e:
        print(f"conformance_counts: {e}", file=sys.stderr)
        return 150
    return 0


if __name__ == "__main__":
    sys.exit(main())
