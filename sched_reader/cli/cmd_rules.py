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
        from sched_reader.cli.runners import rules as runner

        return runner.run_rules(fmt=fmt.value, echo=typer.echo)

    raise typer.Exit(run_guarded(body))


def rule(
    rule_id: str = typer.Argument(..., metavar="RULE", help="A rule id (SR201) or name (kv-cache-bound)."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Explain one rule: why it matters, an example, the fix, since which release."""

    def body() -> int:
        from sched_reader.cli.runners import rules as runner

        return runner.run_rule(rule_id, fmt=fmt.value, echo=typer.echo)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``rules`` and ``rule`` to the app."""
    app.command("rules")(rules)
    app.command("rule")(rule)
