"""The typer application: thin wiring of the command modules (each imports heavy code lazily)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="sched-reader",
    help="Read a vLLM deploy config and predict what vLLM's scheduler will do with it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from sched_reader.cli import cmd_compat, cmd_config, cmd_diagnose, cmd_simulate

    for mod in (cmd_config, cmd_diagnose, cmd_compat, cmd_simulate):
        mod.register(app)


_register()


def main() -> None:
    """Console-script entry point."""
    app()
