"""The typer application: thin wiring of the command modules (each imports heavy code lazily)."""

from __future__ import annotations

import sys

import typer

from sched_reader import __version__

app = typer.Typer(
    name="sched-reader",
    help=(
        "Read a vLLM deploy config (vLLM --config YAML, `vllm serve` command line, Kubernetes, Helm, compose) "
        "and predict what vLLM's scheduler will do with it: KV-cache budget, capacity, speed, bottleneck, "
        "and whether the flags are valid for the vLLM release deployed.\n\n"
        "Exit codes: 0 clean, 1 findings at or above --fail-on, 2 unreadable or invalid input."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sched-reader {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Predict what vLLM's scheduler does with a deploy config, before a GPU is rented."""


def _register() -> None:
    from sched_reader.cli import cmd_compat, cmd_config, cmd_diagnose, cmd_lesson, cmd_lint, cmd_rules, cmd_simulate

    for mod in (cmd_config, cmd_diagnose, cmd_simulate, cmd_compat, cmd_lint, cmd_rules, cmd_lesson):
        mod.register(app)
    _register_loop()


def _register_loop() -> None:
    """explain-log / calibrate / tune (issue 13; kept apart so the command list merges cleanly)."""
    from sched_reader.cli import cmd_calibrate, cmd_explain_log, cmd_tune

    cmd_explain_log.register(app)
    cmd_calibrate.register(app)
    cmd_tune.register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: splits off a command line after ``--``, then runs typer."""
    from sched_reader.cli.common import COMMAND_LINE

    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        i = args.index("--")
        head, tail = args[:i], args[i + 1 :]
        COMMAND_LINE.set(tail)
    else:
        head = args
    app(args=head, prog_name="sched-reader")
