"""``sched-reader rules`` (the table of every rule) and ``sched-reader rule SR201`` (one rule in full).

Both read the rule registry through ``analyzers/rule_docs.py``: rationale, an example that triggers the
rule, the fix, and the sched-reader release that introduced it.
"""

from __future__ import annotations


import typer

from sched_reader.cli.common import FormatOption, OutputFormat, run_guarded


def rules(fmt: OutputFormat = FormatOption) -> None:
    """List every rule: id, name, severity, summary."""

    def body() -> int:
        from sched_reader.analyzers import rule_docs

        if fmt == OutputFormat.json:
            import json

            typer.echo(json.dumps({"schema_version": 1, "rules": rule_docs.rules_json()}, indent=2))
        else:
            typer.echo(rule_docs.rules_table(), nl=False)
        return 0

    raise typer.Exit(run_guarded(body))


def rule(
    rule_id: str = typer.Argument(..., metavar="RULE", help="A rule id (SR201) or name (kv-cache-bound)."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Explain one rule: why it matters, an example, the fix, since which release."""

    def body() -> int:
        from sched_reader.analyzers import rule_docs
        from sched_reader.errors import InputError

        r = rule_docs.lookup(rule_id.strip())
        if r is None:
            guess = rule_docs.suggest(rule_id.strip())
            raise InputError(f"unknown rule {rule_id!r}",
                             hint=f"did you mean {guess}?" if guess else "see `sched-reader rules`")
        if fmt == OutputFormat.json:
            import json

            [doc] = [d for d in rule_docs.rules_json() if d["id"] == r.id]
            ex = rule_docs.EXAMPLES.get(r.id)
            doc["example"] = None if ex is None else {"vllm": ex.vllm, "argv": list(ex.argv),
                                                      "fixed": list(ex.fixed) if ex.fixed else None}
            typer.echo(json.dumps(doc, indent=2))
        else:
            typer.echo(rule_docs.rule_text(r), nl=False)
        return 0

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``rules`` and ``rule`` to the app."""
    app.command("rules")(rules)
    app.command("rule")(rule)
