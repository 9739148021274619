"""The typer application: thin wiring of the command modules (each imports heavy code lazily)."""

from __future__ import annotations

import sys

import typer

from sched_reader import __version__
from sched_reader.cli import (cmd_calibrate, cmd_compat, cmd_config, cmd_diagnose, cmd_explain_log, cmd_lesson,
                              cmd_lint, cmd_rules, cmd_simulate, cmd_tune)
from sched_reader.cli.common import COMMAND_LINE

# The command modules, in the order --help lists their commands.
_MODULES = (cmd_config, cmd_diagnose, cmd_simulate, cmd_compat, cmd_lint, cmd_rules, cmd_lesson, cmd_explain_log,
            cmd_calibrate, cmd_tune)


def _new_app() -> typer.Typer:
    """An empty sched-reader application: name, root help, settings and the ``--version`` callback."""
    new = typer.Typer(
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
    new.callback()(_root)
    return new


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sched-reader {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Predict what vLLM's scheduler does with a deploy config, before a GPU is rented."""


def _plain_argument_metavars() -> None:
    """Help shows a positional argument by its metavar alone (``FILE...``), as for options.

    typer >= 0.26 prints ``FILE <list[str]>`` for an argument even when it has a metavar; older typer
    (with click) prints ``FILE...``. This keeps the Python type out of the help on both."""
    try:
        from typer.core import TyperArgument
    except ImportError:  # pragma: no cover
        return
    orig = getattr(TyperArgument, "display_type_rich", None)
    if orig is None or getattr(orig, "_sched_reader", False):
        return

    def display_type_rich(self, ctx):  # noqa: ANN001
        return None if self.metavar else orig(self, ctx)

    display_type_rich._sched_reader = True
    TyperArgument.display_type_rich = display_type_rich


_plain_argument_metavars()


def _full_app() -> typer.Typer:
    """The application with every command (what ``--help`` lists and the tests drive)."""
    full = _new_app()
    for mod in _MODULES:
        mod.register(full)
    return full


app = _full_app()
# command name -> the module that registers it (``rules`` and ``rule`` -> cmd_rules), read from the app
_COMMAND_MODULES = {info.name: sys.modules[info.callback.__module__] for info in app.registered_commands}


def app_for(args: list[str]) -> typer.Typer:
    """The application to run ``args`` with: only the named command's module when ``args`` starts with a
    command name (typer then builds one command's options, not eleven: ~15 ms of start-up), else the full app.
    Help, usage errors and output are the same either way; a misspelt command goes to the full app."""
    mod = _COMMAND_MODULES.get(args[0]) if args else None
    if mod is None:
        return app
    one = _new_app()
    mod.register(one)
    return one


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: splits off a command line after ``--``, then runs typer."""
    args = list(sys.argv[1:] if argv is None else argv)
    head, tail = args, None
    if "--" in args:
        i = args.index("--")
        head, tail = args[:i], args[i + 1 :]
    # set for this call only: a later call in the same process (an embedding program, a test) must not see
    # this command line when it has none of its own
    token = COMMAND_LINE.set(tail)
    exc = _click_exceptions()
    try:
        rv = app_for(head)(args=head, prog_name="sched-reader", standalone_mode=False)
    except exc.UsageError as err:
        sys.stderr.write(f"sched-reader: error: {usage_message(err)}\n")
        sys.exit(2)
    except exc.Abort:
        sys.stderr.write("sched-reader: error: aborted\n")
        sys.exit(130)
    finally:
        COMMAND_LINE.reset(token)
    sys.exit(rv if isinstance(rv, int) else 0)


def _click_exceptions():
    """click's exception module: typer >= 0.26 vendors click as ``typer._click``; older typer uses click."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import exceptions
    return exceptions


def usage_message(err) -> str:
    """A click usage error as one line: the option, what was wrong, the choices, a close match.

    ``--format sarf`` -> ``--format: 'sarf' is not one of text, json, sarif, ... (did you mean 'sarif'?)``
    (click's own text, less the "Value error," its enum conversion prefixes, and its "Try --help" block).
    """
    import difflib

    exc = _click_exceptions()
    import re

    msg = err.format_message().replace("Value error, ", "").strip()
    param = getattr(err, "param", None)
    if isinstance(err, exc.BadParameter) and param is not None:
        name = max(getattr(param, "opts", None) or [param.name or "value"], key=len)
        msg = re.sub(r"^Invalid value for [^:]*:\s*", "", msg)
        choices = [str(c) for c in getattr(getattr(param, "type", None), "choices", None) or []]
        m = re.search(r"'([^']*)' is not one of (.*?)\.?$", msg)
        if m:
            got = m.group(1)
            choices = choices or re.findall(r"'([^']*)'", m.group(2))
            msg = f"{got!r} is not one of {', '.join(choices)}"
            close = difflib.get_close_matches(got.lower(), choices, n=1, cutoff=0.5)
            if close:
                msg += f" (did you mean {close[0]!r}?)"
        msg = f"{name}: {msg}"
    ctx = getattr(err, "ctx", None)
    cmd = ctx.command_path if ctx is not None else "sched-reader"
    return f"{msg} (see `{cmd} --help`)"
