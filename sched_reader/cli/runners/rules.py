"""``sched-reader rules`` and ``rule RULE``: the rule registry as a table, or one rule's documentation."""

from __future__ import annotations

import json
from typing import Callable

from sched_reader.report.layout import wrap_text
from sched_reader.analyzers import rule_docs
from sched_reader.errors import InputError


def run_rules(*, fmt: str, echo: Callable[..., None]) -> int:
    if fmt == "json":
        echo(json.dumps({"schema_version": 1, "rules": rule_docs.rules_json()}, indent=2))
    else:
        echo(wrap_text(rule_docs.rules_table()), nl=False)
    return 0


def run_rule(rule_id: str, *, fmt: str, echo: Callable[..., None]) -> int:
    r = rule_docs.lookup(rule_id.strip())
    if r is None:
        guess = rule_docs.suggest(rule_id.strip())
        raise InputError(f"unknown rule {rule_id!r}",
                         hint=f"did you mean {guess}?" if guess else "see `sched-reader rules`")
    if fmt == "json":
        [doc] = [d for d in rule_docs.rules_json() if d["id"] == r.id]
        ex = rule_docs.EXAMPLES.get(r.id)
        doc["example"] = None if ex is None else {"vllm": ex.vllm, "argv": list(ex.argv),
                                                  "fixed": list(ex.fixed) if ex.fixed else None}
        echo(json.dumps(doc, indent=2))
    else:
        echo(wrap_text(rule_docs.rule_text(r)), nl=False)
    return 0
