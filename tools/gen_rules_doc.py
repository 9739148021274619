#!/usr/bin/env python3
"""Generate docs/rules.md from the rule registry (sched_reader/analyzers/rule_catalog.py).

    python tools/gen_rules_doc.py          # write docs/rules.md
    python tools/gen_rules_doc.py --check  # exit 1 when docs/rules.md is out of date

tests/analyzers/test_lint_rules.py runs the same comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from sched_reader.analyzers.rule_catalog import render_markdown

    text = render_markdown()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run python tools/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
