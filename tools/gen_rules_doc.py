#!/usr/bin/env python3
"""Generate docs/rules.md (and its copy shipped in the package) from the rule registry.

    python tools/gen_rules_doc.py          # write docs/rules.md and sched_reader/analyzers/data/rules.md
    python tools/gen_rules_doc.py --check  # exit 1 when either is out of date

The page is rendered by sched_reader/analyzers/rule_docs.py (the catalog's text plus each rule's
example and first release); tests/analyzers/test_lint_rules.py runs the same comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
SHIPPED = ROOT / "sched_reader" / "analyzers" / "data" / "rules.md"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from sched_reader.analyzers.rule_docs import render_markdown

    text = render_markdown()
    if "--check" in argv:
        stale = [p for p in (DOC, SHIPPED) if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python tools/gen_rules_doc.py", file=sys.stderr)
        return 1 if stale else 0
    for p in (DOC, SHIPPED):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
